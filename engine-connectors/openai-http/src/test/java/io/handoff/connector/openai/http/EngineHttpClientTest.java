package io.handoff.connector.openai.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client against a real Vert.x server on loopback, which can watch its connections close. */
class EngineHttpClientTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private Vertx vertx;
    private HttpServer server;
    private Endpoint base;
    private EngineHttpClient client;
    private final CompletableFuture<Void> connectionClosed = new CompletableFuture<>();
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private final List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicInteger mostHeld = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        server = vertx.createHttpServer().requestHandler(this::serve);
        server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        base = Endpoint.of("engine-0", "http://127.0.0.1:" + server.actualPort());
        client = new EngineHttpClient(vertx, new ClientSettings(Duration.ofSeconds(2), Duration.ofSeconds(5), 8));
    }

    @AfterEach
    void stop() {
        client.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    private void serve(HttpServerRequest req) {
        req.connection().closeHandler(v -> connectionClosed.complete(null));
        clientPorts.add(req.remoteAddress().port());
        req.body().onSuccess(b -> {
            bodies.add(b.toString());
            var resp = req.response();
            switch (req.path()) {
                case "/json" -> resp.putHeader("Content-Type", "application/json").end("{\"ok\":true,\"n\":9007199254740993}");
                case "/bad" -> resp.setStatusCode(400).end("{\"error\":{\"message\":\"min_tokens too big\"}}");
                case "/sse" -> {
                    resp.setChunked(true).putHeader("Content-Type", "text/event-stream");
                    resp.write("data: {\"i\":1}\n\ndata: {\"i\"");
                    vertx.setTimer(20, t -> resp.end(":2}\n\ndata: [DONE]\n\n"));
                }
                case "/cut" -> resp.setChunked(true).end("data: {\"i\":1}\n\n");
                case "/error-event" -> resp.setChunked(true)
                        .end("data: {\"i\":1}\n\ndata: {\"error\":{\"message\":\"Internal server error\",\"code\":500}}\n\n"
                                + "data: [DONE]\n\n");
                case "/bare-error-event" -> resp.setChunked(true)
                        .end("data: {\"i\":1}\n\ndata: {\"object\":\"error\",\"message\":\"KV cache transfer timeout\","
                                + "\"code\":503}\n\ndata: [DONE]\n\n");
                case "/endless" -> {
                    resp.setChunked(true);
                    long id = vertx.setPeriodic(50, t -> resp.write("data: {\"i\":0}\n\n"));
                    req.connection().closeHandler(v -> {
                        vertx.cancelTimer(id);
                        connectionClosed.complete(null);
                    });
                }
                case "/hold" -> {
                    resp.setChunked(true).write("data: {\"i\":0}\n\n");
                    mostHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
                    req.connection().closeHandler(v -> held.decrementAndGet());
                }
                case "/silent" -> {
                    // never answers: the idle timeout must end the exchange
                }
                default -> resp.setStatusCode(404).end();
            }
        });
    }

    @Test
    void postJsonReturnsTheAnswerWithExactNumbers() {
        JsonNode answer = client.postJson(base, "/json", Map.of("X-Request-Id", "r1"), Json.parse("{\"q\":1}"))
                .await().atMost(WAIT);
        assertEquals(9007199254740993L, answer.get("n").asLong());
        assertEquals(List.of("{\"q\":1}"), bodies);
    }

    @Test
    void errorStatusCarriesTheEnginesMessage() {
        EngineException e = failure(() -> client.postJson(base, "/bad", Map.of(), Json.object()).await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("min_tokens too big"));
        assertTrue(e.getMessage().startsWith("POST /bad on engine-0: HTTP 400"), e.getMessage());
        assertFalse(e.getMessage().contains("127.0.0.1"), e.getMessage());
    }

    @Test
    void refusedConnectionWasNotSent() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        EngineException e = failure(() -> client.postJson(Endpoint.of("engine-1", "http://127.0.0.1:" + closedPort),
                "/json", Map.of(), Json.object()).await().atMost(WAIT));
        assertFalse(e.sentToEngine());
        assertTrue(e.retryable());
        // the message may reach a client: the endpoint by its name, the address only in the cause
        assertEquals("POST /json on engine-1: connection refused", e.getMessage());
        assertTrue(String.valueOf(e.getCause()).contains(Integer.toString(closedPort)), String.valueOf(e.getCause()));
    }

    @Test
    void sseEventsArriveUntilDone() {
        List<JsonNode> events = client.postSse(base, "/sse", Map.of(), Json.object()).collect().asList()
                .await().atMost(WAIT);
        assertEquals(List.of(1, 2), events.stream().map(n -> n.get("i").asInt()).toList());
    }

    @Test
    void streamWithoutDoneIsACut() {
        EngineException e = failure(() -> client.postSse(base, "/cut", Map.of(), Json.object()).collect().asList()
                .await().atMost(WAIT));
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
        assertTrue(e.getMessage().contains("[DONE]"));
    }

    @Test
    void errorEventFailsTheStream() {
        EngineException e = failure(() -> client.postSse(base, "/error-event", Map.of(), Json.object()).collect()
                .asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_INTERNAL, e.code());
        assertTrue(e.sentToEngine());
    }

    @Test
    void anErrorObjectSentAsTheEventItselfFailsTheStream() {
        EngineException e = failure(() -> client.postSse(base, "/bare-error-event", Map.of(), Json.object()).collect()
                .asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, e.code());
        assertFalse(e.retryable(), "the engine had accepted the request");
        assertTrue(e.getMessage().contains("KV cache transfer timeout"), e.getMessage());
    }

    @Test
    void cancellingAStreamClosesItsConnection() throws Exception {
        Multi<JsonNode> stream = client.postSse(base, "/endless", Map.of(), Json.object());
        CompletableFuture<Void> first = new CompletableFuture<>();
        Cancellable subscription = stream.subscribe().with(item -> first.complete(null), failure -> { });
        first.get(10, TimeUnit.SECONDS);
        subscription.cancel();
        connectionClosed.get(10, TimeUnit.SECONDS);
    }

    @Test
    void cancellingAWaitingCallClosesItsConnection() throws Exception {
        Cancellable subscription = client.postJson(base, "/endless", Map.of(), Json.object()).subscribe()
                .with(item -> { }, failure -> { });
        Thread.sleep(200);
        subscription.cancel();
        connectionClosed.get(10, TimeUnit.SECONDS);
    }

    @Test
    void silenceEndsWithATimeout() {
        EngineHttpClient impatient = new EngineHttpClient(vertx,
                new ClientSettings(Duration.ofSeconds(2), Duration.ofMillis(500), 8));
        EngineException e = failure(() -> impatient.postJson(base, "/silent", Map.of(), Json.object()).await()
                .atMost(WAIT));
        impatient.close();
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        assertFalse(e.getMessage().contains("127.0.0.1"), e.getMessage());
        assertTrue(e.sentToEngine());
    }

    @Test
    void everyEndingGivesItsConnectionPlaceBack() throws Exception {
        client.postJson(base, "/json", Map.of(), Json.object()).await().atMost(WAIT);
        client.postSse(base, "/sse", Map.of(), Json.object()).collect().asList().await().atMost(WAIT);
        failure(() -> client.postJson(base, "/bad", Map.of(), Json.object()).await().atMost(WAIT));
        failure(() -> client.postSse(base, "/cut", Map.of(), Json.object()).collect().asList().await().atMost(WAIT));
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        failure(() -> client.postJson(Endpoint.of("engine-1", "http://127.0.0.1:" + closedPort), "/json", Map.of(),
                Json.object()).await().atMost(WAIT));
        CompletableFuture<Void> first = new CompletableFuture<>();
        Cancellable endless = client.postSse(base, "/endless", Map.of(), Json.object()).subscribe()
                .with(item -> first.complete(null), failure -> { });
        first.get(10, TimeUnit.SECONDS);
        assertEquals(1, client.exchangesInFlight());
        endless.cancel();
        Awaitility.await("every exchange ended").atMost(WAIT).until(() -> client.exchangesInFlight() == 0);
    }

    @Test
    void theConnectionLimitHoldsOverEveryShard() throws Exception {
        int limit = 2 * ConnectionShards.CONNECTIONS_PER_SHARD + 2;
        EngineHttpClient bounded = new EngineHttpClient(vertx,
                new ClientSettings(Duration.ofSeconds(2), Duration.ofSeconds(30), limit));
        List<Cancellable> streams = new ArrayList<>();
        List<CompletableFuture<Void>> firsts = new ArrayList<>();
        for (int i = 0; i <= limit; i++) {
            CompletableFuture<Void> first = new CompletableFuture<>();
            firsts.add(first);
            streams.add(bounded.postSse(base, "/hold", Map.of(), Json.object()).subscribe()
                    .with(item -> first.complete(null), failure -> { }));
        }
        Awaitility.await("the limit's streams under way").atMost(WAIT)
                .until(() -> firsts.stream().filter(CompletableFuture::isDone).count() == limit);
        // read while every place is held: once a stream is cancelled, the engine may see the waiting stream's new
        // connection before it sees the cancelled one close, though the client never held more than the limit
        assertEquals(limit, mostHeld.get(), "the engine never held more connections than the limit");
        int waiting = firsts.indexOf(firsts.stream().filter(f -> !f.isDone()).findFirst().orElseThrow());
        for (int i = 0; i <= limit; i++) {
            if (i != waiting) {
                streams.get(i).cancel();
            }
        }
        firsts.get(waiting).get(10, TimeUnit.SECONDS);
        streams.get(waiting).cancel();
        Awaitility.await("every exchange ended").atMost(WAIT).until(() -> bounded.exchangesInFlight() == 0);
        bounded.close();
    }

    @Test
    void eachEventLoopUsesConnectionsOfItsOwn() throws Exception {
        List<Context> loops = EventLoopContexts.two(vertx);
        Context first = loops.get(0);
        Context second = loops.get(1);
        Map<Context, List<Integer>> portsOf = Map.of(first, new ArrayList<>(), second, new ArrayList<>());
        for (int round = 0; round < 3; round++) {
            for (Context loop : List.of(first, second)) {
                CompletableFuture<Thread> caller = new CompletableFuture<>();
                CompletableFuture<Thread> answeredOn = new CompletableFuture<>();
                loop.runOnContext(v -> {
                    caller.complete(Thread.currentThread());
                    client.postJson(base, "/json", Map.of(), Json.object()).subscribe().with(
                            answer -> answeredOn.complete(Thread.currentThread()),
                            answeredOn::completeExceptionally);
                });
                assertEquals(caller.get(10, TimeUnit.SECONDS), answeredOn.get(10, TimeUnit.SECONDS));
                portsOf.get(loop).add(clientPorts.get(clientPorts.size() - 1));
            }
        }
        // one after the other, a single pool would hand both loops the same idle connection (the one used last)
        assertEquals(1, portsOf.get(first).stream().distinct().count(), "the first loop reuses its connection");
        assertEquals(1, portsOf.get(second).stream().distinct().count(), "the second loop reuses its connection");
        assertNotEquals(portsOf.get(first).get(0), portsOf.get(second).get(0), "each loop has its own");
    }

    static EngineException failure(Runnable call) {
        return assertThrows(EngineException.class, call::run);
    }
}
