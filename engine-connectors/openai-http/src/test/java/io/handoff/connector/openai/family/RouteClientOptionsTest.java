package io.handoff.connector.openai.family;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.openai.http.EngineHttpClient;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client options every OpenAI-compatible family shares, {@code max-connections} above all: a streaming leg holds
 * its connection for its whole life, so the option is the number of streams one endpoint serves at once through one
 * replica. Against a real Vert.x server on loopback that counts the streams open at once.
 */
class RouteClientOptionsTest {

    private Vertx vertx;

    @AfterEach
    void stop() {
        if (vertx != null) {
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    private static ConnectorConfig route(Map<String, String> options) {
        return new ConnectorConfig("route-1", "m", List.of(), List.of(), options);
    }

    @Test
    void withoutTheOptionAnEndpointGets1024Connections() {
        ClientSettings settings = RouteOptions.client(route(Map.of()));

        assertEquals(1024, settings.poolSize());
        assertEquals(1024, settings.prefillPoolSize());
        assertEquals(Duration.ofSeconds(300), settings.idleTimeout());
    }

    @Test
    void thePrefillLegsLimitFollowsMaxConnectionsUnlessSetApart() {
        ClientSettings raised = RouteOptions.client(route(Map.of(RouteOptions.MAX_CONNECTIONS, "10064")));
        assertEquals(10064, raised.prefillPoolSize());

        ClientSettings apart = RouteOptions.client(route(Map.of(RouteOptions.MAX_CONNECTIONS, "10064",
                RouteOptions.PREFILL_MAX_CONNECTIONS, "512")));
        assertEquals(10064, apart.poolSize());
        assertEquals(512, apart.prefillPoolSize());
        assertEquals(512, apart.forPrefillLegs().poolSize(), "the prefill legs' client has their limit as its pool");
    }

    @Test
    void maxConnectionsBoundsTheStreamsOpenAtOnceAndTheOthersWaitTheirTurn() throws Exception {
        vertx = Vertx.vertx();
        AtomicInteger open = new AtomicInteger();
        List<Integer> openOnArrival = new CopyOnWriteArrayList<>();
        HttpServer server = vertx.createHttpServer().requestHandler((HttpServerRequest req) -> req.body()
                .onSuccess(b -> {
                    openOnArrival.add(open.incrementAndGet());
                    var resp = req.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
                    resp.write("data: {\"i\":1}\n\n");
                    // each stream stays open a while, long enough for every other request to be sent at once if
                    // the pool let it
                    vertx.setTimer(100, t -> {
                        open.decrementAndGet();
                        resp.end("data: [DONE]\n\n");
                    });
                }));
        server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        Endpoint engine = Endpoint.of("engine-0", "http://127.0.0.1:" + server.actualPort());
        ClientSettings settings = RouteOptions.client(route(Map.of(RouteOptions.MAX_CONNECTIONS, "2")));
        assertEquals(2, settings.poolSize());

        try (EngineHttpClient client = new EngineHttpClient(vertx, settings)) {
            List<CompletableFuture<List<JsonNode>>> streams = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                streams.add(client.postSse(engine, "/sse", Map.of(), JsonNodeFactory.instance.objectNode()).collect().asList()
                        .subscribeAsCompletionStage().toCompletableFuture().thenApply(List::copyOf));
            }
            for (var stream : streams) {
                assertEquals(1, stream.get(10, TimeUnit.SECONDS).size(), "every stream ends with its one event");
            }
        }

        assertEquals(5, openOnArrival.size());
        assertTrue(openOnArrival.stream().allMatch(n -> n <= 2), "streams open at once on arrival: " + openOnArrival);
        assertTrue(openOnArrival.contains(2), "the two connections were used at once: " + openOnArrival);
    }

    @Test
    void aValueThatIsNotAPositiveWholeNumberStopsTheRouteNamingTheOption() {
        for (String option : List.of(RouteOptions.MAX_CONNECTIONS, RouteOptions.PREFILL_MAX_CONNECTIONS)) {
            for (String bad : List.of("0", "-3", "many", "4294967296")) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> RouteOptions.client(route(Map.of(option, bad))), option + "=" + bad);
                assertTrue(refused.getMessage().contains("route route-1") && refused.getMessage()
                        .contains(option), refused.getMessage());
            }
        }
    }
}
