package io.handoff.connector.trtllm;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.connector.testsupport.ManualClock;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.handoff.connector.testsupport.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both TensorRT-LLM styles end to end on simulated workers that check the HMAC header, and the generation-first
 * lifecycle the shared contract cannot drive (its prefill leg cannot run alone): aborts in each phase, a lost context
 * worker, transfer timeouts, and no KV pinned once the declared hold has passed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TrtllmGenerationFirstTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String KEY = "tck-shared-secret";

    private final AtomicInteger ids = new AtomicInteger();
    private final ManualClock clock = new ManualClock();
    private Vertx vertx;
    private TrtllmSimulatedFleet fleet;
    private EngineConnector connector;
    private ConnectorCapabilities capabilities;

    @BeforeAll
    void start() {
        vertx = Vertx.vertx();
        fleet = new TrtllmSimulatedFleet(vertx, "context-first,generation-first", KEY, KEY);
        capabilities = new TrtllmConnectorService().initialise(fleet.route());
        connector = connect(fleet);
    }

    private EngineConnector connect(TrtllmSimulatedFleet f) {
        return new TrtllmConnectorService().create(f.route(), ConnectorContext.of(vertx, clock));
    }

    @AfterAll
    void stop() {
        connector.close();
        fleet.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @BeforeEach
    void clean() {
        for (Endpoint e : List.of(fleet.prefill(), fleet.decode())) {
            eventually(e.name() + " is up", () -> fleet.engine(e).isUp());
            fleet.engine(e).reset();
        }
    }

    @AfterEach
    void nothingPinnedOnceTheHoldEnded() {
        passTheHold(fleet);
        for (Endpoint e : List.of(fleet.prefill(), fleet.decode())) {
            eventually(e.name() + " is up", () -> fleet.engine(e).isUp());
            eventually(e.name() + " pins no KV after the declared hold", () -> fleet.engine(e).pinnedBlocks() == 0);
        }
    }

    // ------------------------------------------------------------------ helpers

    private void passTheHold(TrtllmSimulatedFleet f) {
        Duration by = capabilities.engineHold().plusSeconds(1);
        clock.advance(by);
        f.advanceClock(by);
    }

    private GenerateRequest request(int maxTokens) {
        return GenerateRequest.newBuilder().setPrompt("trtllm lifecycle prompt " + ids.incrementAndGet()
                + " about parked contexts").setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    private Handoff plan(EngineConnector c, TrtllmSimulatedFleet f, ScheduleStyle style, GenerateRequest r) {
        return c.plan("trt-" + ids.incrementAndGet(), style, r, f.prefill(), f.decode());
    }

    private long ctx(String stat) {
        return fleet.contextView().stat(stat);
    }

    private long gen(String stat) {
        return fleet.generationView().stat(stat);
    }

    private void noKvPinnedNow() {
        eventually("no KV pinned", () -> fleet.contextView().pinnedBlocks() == 0
                && fleet.generationView().pinnedBlocks() == 0);
    }

    private static String text(List<GenerateResponse> events) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(GenerateResponse::hasToken).forEach(e -> sb.append(e.getToken().getText()));
        return sb.toString();
    }

    // ------------------------------------------------------------------ cases

    private GenerateRequest chat(int maxTokens) {
        Value message = Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields("role", Value.newBuilder().setStringValue("user").build())
                .putFields("content", Value.newBuilder().setStringValue(
                        "trtllm chat " + ids.incrementAndGet() + " about parked contexts").build())).build();
        return GenerateRequest.newBuilder().setExtra(Struct.newBuilder().putFields("messages",
                Value.newBuilder().setListValue(ListValue.newBuilder().addValues(message)).build()))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    @Test
    void aChatInBothStylesWithTheAuthHeaderAnswersAsTheAggregatedChat() throws Exception {
        GenerateRequest cfRequest = chat(12);
        Handoff cf = plan(connector, fleet, ScheduleStyle.CONTEXT_FIRST, cfRequest);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                connector.prefill(cf).await().atMost(WAIT));
        List<GenerateResponse> cfEvents = connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);
        String expected = fleet.aggregatedText(cfRequest);
        assertFalse(expected.isEmpty());
        assertEquals(expected, text(cfEvents));

        GenerateRequest gfRequest = chat(12);
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, gfRequest);
        CompletableFuture<List<GenerateResponse>> decode = connector.decode(gf).collect().asList()
                .subscribeAsCompletionStage();
        assertInstanceOf(PrefillResult.Ready.class, connector.prefill(gf).await().atMost(WAIT));
        assertEquals(fleet.aggregatedText(gfRequest), text(decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
        noKvPinnedNow();
    }

    @Test
    void bothStylesEndToEndWithTheAuthHeader() throws Exception {
        GenerateRequest cfRequest = request(12);
        Handoff cf = plan(connector, fleet, ScheduleStyle.CONTEXT_FIRST, cfRequest);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                connector.prefill(cf).await().atMost(WAIT));
        assertEquals(1, ready.held().size());
        List<GenerateResponse> cfEvents = connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);
        assertEquals(fleet.aggregatedText(cfRequest), text(cfEvents));

        GenerateRequest gfRequest = request(12);
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, gfRequest);
        CompletableFuture<List<GenerateResponse>> decode = connector.decode(gf).collect().asList()
                .subscribeAsCompletionStage();
        PrefillResult.Ready gfReady = assertInstanceOf(PrefillResult.Ready.class,
                connector.prefill(gf).await().atMost(WAIT));
        assertTrue(gfReady.held().isEmpty(), "the context pushed its KV");
        List<GenerateResponse> gfEvents = decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(fleet.aggregatedText(gfRequest), text(gfEvents));
        GenerateResponse last = gfEvents.get(gfEvents.size() - 1);
        assertTrue(last.hasFinished() && last.hasUsage());

        assertEquals(0, ctx("auth_rejected") + gen("auth_rejected"));
        assertEquals(0, ctx("auth_unverified") + gen("auth_unverified"), "every protected leg was signed");
        noKvPinnedNow();
    }

    @Test
    void aContextThatArrivesFirstWaitsForItsGeneration() throws Exception {
        GenerateRequest r = request(10);
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, r);
        CompletableFuture<PrefillResult> prefill = connector.prefill(gf).subscribeAsCompletionStage();
        eventually("the context waits for its generation", () -> ctx("contexts_waiting_for_generation") == 1);
        List<GenerateResponse> events = connector.decode(gf).collect().asList().await().atMost(WAIT);
        assertInstanceOf(PrefillResult.Ready.class, prefill.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(fleet.aggregatedText(r), text(events));
        noKvPinnedNow();
    }

    @Test
    void abortTheGenerationWhileItWaitsForItsContext() {
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, request(8));
        Cancellable decode = connector.decode(gf).subscribe().with(e -> { }, f -> { });
        eventually("the generation holds its destination KV", () -> fleet.generationView().pinnedBlocks() > 0);
        decode.cancel();
        eventually("the generation worker saw the abort", () -> gen("requests_aborted") > 0);
        noKvPinnedNow();
    }

    @Test
    void abortTheContextWhileItWaitsForItsGeneration() {
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, request(8));
        Cancellable prefill = connector.prefill(gf).subscribe().with(e -> { }, f -> { });
        eventually("the context waits for its generation", () -> ctx("contexts_waiting_for_generation") == 1);
        assertTrue(fleet.contextView().pinnedBlocks() > 0);
        prefill.cancel();
        eventually("the context worker freed it", () -> fleet.contextView().pinnedBlocks() == 0);
    }

    @Test
    void abortMidGeneration() {
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, request(400));
        CompletableFuture<List<GenerateResponse>> firstTokens = connector.decode(gf).select().first(3).collect()
                .asList().subscribeAsCompletionStage();
        connector.prefill(gf).await().atMost(WAIT);
        assertEquals(3, firstTokens.join().size());
        eventually("the generation worker saw the abort", () -> gen("requests_aborted") > 0);
        noKvPinnedNow();
    }

    @Test
    void aGenerationWhoseContextNeverComesTimesOut() throws Exception {
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, request(8));
        CompletableFuture<List<GenerateResponse>> decode = connector.decode(gf).collect().asList()
                .subscribeAsCompletionStage();
        eventually("the generation holds its destination KV", () -> fleet.generationView().pinnedBlocks() > 0);
        passTheHold(fleet);
        Exception e = assertThrows(Exception.class, () -> decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        EngineException failure = assertInstanceOf(EngineException.class, e.getCause());
        assertTrue(failure.getMessage().contains("KV cache transfer timeout"), failure.getMessage());
        assertTrue(failure.sentToEngine());
        assertFalse(failure.retryable());
        assertTrue(gen("kv_transfer_timeouts") > 0);
        noKvPinnedNow();
    }

    @Test
    void theContextWorkerDiesWhileTheGenerationWaits() throws Exception {
        Handoff gf = plan(connector, fleet, ScheduleStyle.GENERATION_FIRST, request(8));
        CompletableFuture<List<GenerateResponse>> decode = connector.decode(gf).collect().asList()
                .subscribeAsCompletionStage();
        eventually("the generation registered with the context",
                () -> ctx("receivers_waiting_for_context") == 1);
        fleet.contextView().crash(Duration.ofMillis(100));
        eventually("the context worker restarted", () -> fleet.contextView().isUp());
        // the generation is not told; the gateway either cancels it or the worker's own timer ends it
        passTheHold(fleet);
        Exception e = assertThrows(Exception.class, () -> decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        EngineException failure = assertInstanceOf(EngineException.class, e.getCause());
        assertTrue(failure.sentToEngine());
        assertFalse(failure.retryable());
        noKvPinnedNow();
    }

    @Test
    void aContextFirstGenerationAfterTheHoldIsNotSent() {
        Handoff cf = plan(connector, fleet, ScheduleStyle.CONTEXT_FIRST, request(8));
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                connector.prefill(cf).await().atMost(WAIT));
        assertTrue(fleet.contextView().pinnedBlocks() > 0, "the context parked its KV");
        passTheHold(fleet);
        eventually("the context worker's timer freed it", () -> fleet.contextView().pinnedBlocks() == 0);
        long before = gen("requests_total");
        EngineException e = assertThrows(EngineException.class,
                () -> connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, e.code());
        assertFalse(e.sentToEngine());
        assertEquals(before, gen("requests_total"));
    }

    @Test
    void aWrongKeyIsRefusedByTheWorkers() {
        TrtllmSimulatedFleet other = new TrtllmSimulatedFleet(vertx, "context-first,generation-first", KEY,
                "not-the-key");
        EngineConnector wrong = connect(other);
        try {
            Handoff cf = plan(wrong, other, ScheduleStyle.CONTEXT_FIRST, request(8));
            PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                    wrong.prefill(cf).await().atMost(WAIT));
            EngineException e = assertThrows(EngineException.class,
                    () -> wrong.decode(ready.handoff()).collect().asList().await().atMost(WAIT));
            assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code(), e.getMessage());
            Handoff gf = plan(wrong, other, ScheduleStyle.GENERATION_FIRST, request(8));
            e = assertThrows(EngineException.class,
                    () -> wrong.decode(gf).collect().asList().await().atMost(WAIT));
            assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code(), e.getMessage());
            assertEquals(2, other.generationView().stat("auth_rejected"));
            // the context parked for the refused generation stays until its timer: the lossy point
            assertTrue(other.contextView().pinnedBlocks() > 0);
            passTheHold(other);
            eventually("the parked context timed out", () -> other.contextView().pinnedBlocks() == 0);
        } finally {
            wrong.close();
            other.close();
        }
    }
}
