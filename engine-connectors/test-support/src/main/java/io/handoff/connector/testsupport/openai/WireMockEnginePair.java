package io.handoff.connector.testsupport.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.testsupport.ManualClock;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

/**
 * Two WireMock servers on loopback standing in for a prefill and a decode engine, and the family's connector (found
 * through ServiceLoader, as the gateway finds it) pointed at them, on a {@link ManualClock}. A family's rig extends
 * it with the answers its engines give; tests stub with {@link #answersJson} and {@link #streams} and read what the
 * engines received with {@link #requests} and {@link #bodies}.
 */
public class WireMockEnginePair implements AutoCloseable {

    public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    public static final Duration WAIT = Duration.ofSeconds(10);
    public static final String COMPLETIONS = "/v1/completions";
    public static final String CHAT_COMPLETIONS = "/v1/chat/completions";

    /**
     * The connector a rig creates: its family (as ServiceLoader finds it), the route and model it serves, and the
     * names of the two endpoints.
     */
    public record Route(String family, String name, String model, String prefillName, String decodeName) {

        public ConnectorService service() {
            return ServiceLoader.load(ConnectorService.class).stream().map(ServiceLoader.Provider::get)
                    .filter(s -> s.family().equals(family)).findFirst().orElseThrow();
        }

        public ConnectorConfig config(Map<String, String> options, Endpoint prefill, Endpoint decode) {
            return new ConnectorConfig(name, model, List.of(prefill), List.of(decode), new HashMap<>(options));
        }
    }

    public final WireMockServer prefillEngine = loopbackServer();
    public final WireMockServer decodeEngine = loopbackServer();
    public final Vertx vertx = Vertx.vertx();
    public final ManualClock clock = new ManualClock(START);
    public final Endpoint prefill;
    public final Endpoint decode;
    public final EngineConnector connector;

    protected WireMockEnginePair(Route route, Map<String, String> options) {
        prefillEngine.start();
        decodeEngine.start();
        prefill = Endpoint.of(route.prefillName(), "http://127.0.0.1:" + prefillEngine.port());
        decode = Endpoint.of(route.decodeName(), "http://127.0.0.1:" + decodeEngine.port());
        connector = route.service().create(route.config(options, prefill, decode), ConnectorContext.of(vertx, clock));
    }

    private static WireMockServer loopbackServer() {
        return new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    }

    /** {@code engine} answers every POST to {@code path} with this JSON body. */
    public static void answersJson(WireMockServer engine, String path, String json) {
        engine.stubFor(post(urlEqualTo(path)).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody(json)));
    }

    /** {@code engine} answers every POST to {@code path} with this server-sent-event stream. */
    public static void streams(WireMockServer engine, String path, String sse) {
        engine.stubFor(post(urlEqualTo(path)).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse)));
    }

    /** The requests an engine received, oldest first. */
    public static List<ServeEvent> requests(WireMockServer engine) {
        List<ServeEvent> events = new ArrayList<>(engine.getAllServeEvents());
        Collections.reverse(events); // WireMock lists newest first
        return events;
    }

    /** The JSON bodies an engine received, oldest first. */
    public static List<JsonNode> bodies(WireMockServer engine) {
        return requests(engine).stream().map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
    }

    /** The JSON bodies an engine received on {@code path}, oldest first. */
    public static List<JsonNode> bodies(WireMockServer engine, String path) {
        return requests(engine).stream().filter(e -> e.getRequest().getUrl().equals(path))
                .map(e -> Json.parse(e.getRequest().getBodyAsString())).toList();
    }

    /** Forgets what both engines received (their stubs stay). */
    public void resetRequests() {
        prefillEngine.resetRequests();
        decodeEngine.resetRequests();
    }

    /** How many requests the two engines received together. */
    public int sent() {
        return prefillEngine.getAllServeEvents().size() + decodeEngine.getAllServeEvents().size();
    }

    @Override
    public void close() {
        connector.close();
        prefillEngine.stop();
        decodeEngine.stop();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
