package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.ManualClock;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * {@code prefill-max-connections} bounds the prefill legs open at once to one endpoint, apart from
 * {@code max-connections}, which bounds the decode streams: a prefill leg is short, so a route sized for thousands of
 * open decode streams need not keep as many prefill connections. Against real Vert.x servers on loopback that count
 * the exchanges open at once and hold each until every leg is open together, or for a second when the pool lets no
 * more through.
 */
class VllmConnectionLimitsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final long LONGEST_HOLD_MS = 1000;
    private static final int LEGS = 5;
    private static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown fox")
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(2)).build();

    private final Vertx vertx = Vertx.vertx();
    private EngineConnector connector;

    @AfterEach
    void stop() {
        if (connector != null) {
            connector.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    /** The most exchanges an engine had open at once, and the engine's endpoint. */
    private record CountingEngine(Endpoint endpoint, AtomicInteger mostOpen) {
    }

    private CountingEngine engine(String name, Consumer<HttpServerRequest> answer) throws Exception {
        AtomicInteger mostOpen = new AtomicInteger();
        List<HttpServerRequest> held = new ArrayList<>();
        // a server's handlers run on its one event loop, so the list needs no lock
        HttpServer server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
            held.add(req);
            mostOpen.accumulateAndGet(held.size(), Math::max);
            if (held.size() == LEGS) {
                held.forEach(answer);
                held.clear();
                return;
            }
            vertx.setTimer(LONGEST_HOLD_MS, t -> {
                if (held.remove(req)) {
                    answer.accept(req);
                }
            });
        }));
        server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return new CountingEngine(Endpoint.of(name, "http://127.0.0.1:" + server.actualPort()), mostOpen);
    }

    @Test
    void prefillLegsAreBoundedByTheirOwnLimitAndDecodeStreamsByMaxConnections() throws Exception {
        CountingEngine producer = engine("prefill-0", req -> req.response()
                .putHeader("Content-Type", "application/json")
                .end("{\"id\":\"cmpl-r1\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                        + "\"text\":\" The\",\"token_ids\":[464],\"finish_reason\":\"length\"}],\"usage\":"
                        + "{\"prompt_tokens\":4,\"completion_tokens\":1,\"total_tokens\":5},\"kv_transfer_params\":"
                        + WireMockRig.PRODUCER_PARAMS + "}"));
        CountingEngine consumer = engine("decode-0", req -> req.response()
                .putHeader("Content-Type", "text/event-stream").end(WireMockRig.DECODE_STREAM));
        connector = WireMockRig.service().create(WireMockRig.config(Map.of("hold-mode", "fixed",
                "max-connections", "8", "prefill-max-connections", "2"), producer.endpoint(), consumer.endpoint()),
                ConnectorContext.of(vertx, new ManualClock()));

        List<CompletableFuture<PrefillResult>> prefills = new ArrayList<>();
        for (int i = 0; i < LEGS; i++) {
            prefills.add(connector.prefill(connector.plan("r" + i, ScheduleStyle.CONTEXT_FIRST, REQUEST,
                    producer.endpoint(), consumer.endpoint())).subscribeAsCompletionStage().toCompletableFuture());
        }
        List<PrefillResult.Ready> ready = new ArrayList<>();
        for (var prefill : prefills) {
            ready.add(assertInstanceOf(PrefillResult.Ready.class, prefill.get(WAIT.toSeconds(), TimeUnit.SECONDS)));
        }
        // every decode is sent at once, so that only the pool could keep them from being open together
        List<CompletableFuture<List<GenerateResponse>>> decodes = new ArrayList<>();
        for (var handoff : ready) {
            decodes.add(connector.decode(handoff.handoff()).collect().asList().subscribeAsCompletionStage()
                    .toCompletableFuture());
        }
        for (var decode : decodes) {
            assertEquals(3, decode.get(WAIT.toSeconds(), TimeUnit.SECONDS).size(), "every decode streams to its end");
        }

        assertEquals(2, producer.mostOpen().get(), "prefill legs open at once: their own limit, reached");
        assertEquals(LEGS, consumer.mostOpen().get(), "decode streams open at once: all, under max-connections");
    }
}
