package io.handoff.connector.tck;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.Leg;
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
import java.util.EnumSet;
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
 * The contract every engine connector passes against its family's simulators. A connector's test subclasses it and
 * supplies the family's {@link ConnectorService} and a way to start its {@link SimulatedFleet}; the suite then drives
 * the connector through the SPI only.
 *
 * <p>After every case the fleet's clock is moved past the hold the connector declared
 * ({@link ConnectorCapabilities#engineHold()}) and no engine may still pin KV: whatever a case left behind, the
 * engine's own timer (or the connector's cleanup) must have freed it by then.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ConnectorContract {

    private static final Duration PAST_THE_HOLD = Duration.ofSeconds(1);
    private final AtomicInteger ids = new AtomicInteger();

    private Vertx vertx;
    // starts at the current instant, like the simulators' clock: engines report their deadlines on that time
    private final ManualClock clock = new ManualClock();

    protected SimulatedFleet fleet;
    protected EngineConnector connector;
    protected ConnectorCapabilities capabilities;

    /** (a) The family under test. */
    protected abstract ConnectorService service();

    /** (b) Starts the family's simulators; (c) their stats are read through the fleet. */
    protected abstract SimulatedFleet startFleet(Vertx vertx);

    @BeforeAll
    void startFleetAndConnector() {
        vertx = Vertx.vertx();
        fleet = startFleet(vertx);
        capabilities = service().initialise(fleet.route());
        connector = service().create(fleet.route(), ConnectorContext.of(vertx, clock));
    }

    @AfterAll
    void stopFleetAndConnector() {
        if (connector != null) {
            connector.close();
        }
        if (fleet != null) {
            fleet.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @BeforeEach
    void cleanEngines() {
        for (Endpoint e : List.of(fleet.prefill(), fleet.decode())) {
            eventually(e.name() + " is up", () -> fleet.engine(e).isUp());
            fleet.engine(e).reset();
        }
    }

    @AfterEach
    void nothingPinnedOnceTheHoldEnded() {
        for (Endpoint e : List.of(fleet.prefill(), fleet.decode())) {
            eventually(e.name() + " is up", () -> fleet.engine(e).isUp());
            fleet.engine(e).clearFaults(); // holds stay: they are what is checked below
        }
        passTheHold();
        for (Endpoint e : List.of(fleet.prefill(), fleet.decode())) {
            eventually(e.name() + " pins no KV after the declared hold", () -> fleet.engine(e).pinnedBlocks() == 0);
        }
    }

    // ------------------------------------------------------------------ helpers

    protected GenerateRequest request(int maxTokens) {
        return GenerateRequest.newBuilder().setPrompt("contract suite prompt " + ids.incrementAndGet()
                + " about parked kv caches").setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    /**
     * A chat ({@link InputKind#CHAT_MESSAGES}): no prompt, a system and a user message in {@code extra.messages}, as
     * the OpenAI front and gRPC clients send one.
     */
    protected GenerateRequest chat(int maxTokens) {
        ListValue.Builder messages = ListValue.newBuilder();
        messages.addValues(message("system", "answer briefly"));
        messages.addValues(message("user", "contract suite chat " + ids.incrementAndGet() + " about parked kv caches"));
        return GenerateRequest.newBuilder()
                .setExtra(Struct.newBuilder().putFields(InputKind.MESSAGES,
                        Value.newBuilder().setListValue(messages).build()))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    private static Value message(String role, String content) {
        return Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields("role", Value.newBuilder().setStringValue(role).build())
                .putFields("content", Value.newBuilder().setStringValue(content).build())).build();
    }

    protected Handoff plan(ScheduleStyle style, GenerateRequest request) {
        return connector.plan("tck-" + ids.incrementAndGet(), style, request, fleet.prefill(), fleet.decode());
    }

    /**
     * The style the single-style cases (aborts, peer loss, timeouts) run in: the first declared style in the
     * enum's order, so every run of the suite takes the same one. A family whose prefill cannot run alone in that
     * style overrides the cases that wait for a lone prefill.
     */
    protected ScheduleStyle aNativeStyle() {
        return EnumSet.copyOf(capabilities.nativeStyles()).iterator().next();
    }

    /** Moves both clocks past the declared hold, as the engines' timers would. */
    protected void passTheHold() {
        Duration by = capabilities.engineHold().plus(PAST_THE_HOLD);
        clock.advance(by);
        fleet.advanceClock(by);
    }

    private long pinned(Endpoint e) {
        return fleet.engine(e).pinnedBlocks();
    }

    private void noKvPinnedNow() {
        eventually("no KV pinned", () -> pinned(fleet.prefill()) == 0 && pinned(fleet.decode()) == 0);
    }

    private PrefillResult.Ready ready(Handoff handoff) {
        return assertInstanceOf(PrefillResult.Ready.class, connector.prefill(handoff).await().atMost(Legs.WAIT));
    }

    // ------------------------------------------------------------------ cases

    @Test
    void everyDeclaredStyleAnswersAsAnAggregatedRun() {
        for (ScheduleStyle style : capabilities.nativeStyles()) {
            GenerateRequest request = request(12);
            List<GenerateResponse> events = Legs.run(connector, plan(style, request));
            assertEquals(fleet.aggregatedText(request), Legs.text(events), style.configName());
            GenerateResponse last = events.get(events.size() - 1);
            assertTrue(last.hasFinished(), "the last event ends the output");
            assertTrue(last.hasUsage(), "usage rides the last event");
            // the consumer took the KV: nothing stays pinned, without waiting for any hold
            noKvPinnedNow();
        }
    }

    /**
     * A connector that declares chat carries it in every declared style (and in a local prefill, where it has one):
     * the engines apply their own chat template, and the content is what an aggregated run of the same chat gives.
     */
    @Test
    void everyDeclaredStyleAnswersAChatAsAnAggregatedChat() {
        if (!capabilities.inputs().contains(InputKind.CHAT_MESSAGES)) {
            return;
        }
        for (ScheduleStyle style : capabilities.nativeStyles()) {
            GenerateRequest request = chat(12);
            List<GenerateResponse> events = Legs.run(connector, plan(style, request));
            String expected = fleet.aggregatedText(request);
            assertFalse(expected.isEmpty(), "the aggregated chat answered nothing");
            assertEquals(expected, Legs.text(events), style.configName());
            GenerateResponse last = events.get(events.size() - 1);
            assertTrue(last.hasFinished(), "the last event ends the output");
            assertTrue(last.hasUsage(), "usage rides the last event");
            noKvPinnedNow();
        }
        if (capabilities.localPrefill()) {
            GenerateRequest request = chat(10);
            List<GenerateResponse> events = connector.decodeLocally("tck-local-chat", request, fleet.decode())
                    .collect().asList().await().atMost(Legs.WAIT);
            assertEquals(fleet.aggregatedText(request), Legs.text(events));
            noKvPinnedNow();
        }
    }

    @Test
    void stylesNotDeclaredAreRefusedBeforeAnythingIsSent() {
        long before = fleet.engine(fleet.prefill()).stat("requests_total")
                + fleet.engine(fleet.decode()).stat("requests_total");
        for (ScheduleStyle style : EnumSet.complementOf(EnumSet.copyOf(capabilities.nativeStyles()))) {
            EngineException e = assertThrows(EngineException.class, () -> plan(style, request(4)));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
            assertFalse(e.sentToEngine());
        }
        assertEquals(before, fleet.engine(fleet.prefill()).stat("requests_total")
                + fleet.engine(fleet.decode()).stat("requests_total"));
    }

    @Test
    void aLocalPrefillAnswersAsAnAggregatedRun() {
        if (!capabilities.localPrefill()) {
            return;
        }
        GenerateRequest request = request(10);
        List<GenerateResponse> events = connector.decodeLocally("tck-local", request, fleet.decode()).collect()
                .asList().await().atMost(Legs.WAIT);
        assertEquals(fleet.aggregatedText(request), Legs.text(events));
        noKvPinnedNow();
    }

    @Test
    void abortWhileThePrefillRuns() throws Exception {
        // the engine finishes the prefill but holds its answer back: the abort meets a finished request
        fleet.engine(fleet.prefill()).delayAnswers(Duration.ofSeconds(2));
        Handoff handoff = plan(aNativeStyle(), request(8));
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        Cancellable prefill = connector.prefill(handoff).subscribe().with(outcome::complete,
                outcome::completeExceptionally);
        eventually("the prefill reached the engine",
                () -> fleet.engine(fleet.prefill()).stat("requests_total") > 0);
        Thread.sleep(300);
        prefill.cancel();
        connector.abort(handoff, Leg.PREFILL).await().atMost(Legs.WAIT);
        Thread.sleep(2200); // let the held-back answer meet the closed connection
        assertFalse(outcome.isDone(), "a cancelled leg delivers nothing");
    }

    @Test
    void abortBetweenTheLegs() {
        PrefillResult.Ready ready = ready(plan(aNativeStyle(), request(8)));
        for (HeldKv held : ready.held()) {
            DischargeResult result = connector.discharge(held).await().atMost(Legs.WAIT);
            assertEquals(result, connector.discharge(held).await().atMost(Legs.WAIT), "discharge is idempotent");
            if (result.outcome() == DischargeResult.Outcome.ENGINE_HOLDS) {
                // the connector says the engine keeps it: the engine must indeed still hold it, until the hold ends
                assertTrue(pinned(held.endpoint()) > 0, "declared as held but not pinned");
                assertFalse(result.heldUntil().isAfter(clock.instant().plus(capabilities.engineHold())
                        .plus(PAST_THE_HOLD)), "held beyond the declared hold");
            } else {
                assertEquals(DischargeResult.Outcome.RELEASED, result.outcome(), String.valueOf(result.error()));
            }
        }
    }

    @Test
    void abortMidDecode() {
        PrefillResult.Ready ready = ready(plan(aNativeStyle(), request(400)));
        long abortedBefore = fleet.engine(fleet.decode()).stat("requests_aborted");
        List<GenerateResponse> firstTokens = connector.decode(ready.handoff()).select().first(3).collect().asList()
                .await().atMost(Legs.WAIT);
        assertEquals(3, firstTokens.size());
        connector.abort(ready.handoff(), Leg.DECODE).await().atMost(Legs.WAIT);
        eventually("the consumer saw the abort",
                () -> fleet.engine(fleet.decode()).stat("requests_aborted") > abortedBefore);
        noKvPinnedNow();
    }

    @Test
    void producerDiesAfterReady() {
        GenerateRequest request = request(8);
        PrefillResult.Ready ready = ready(plan(aNativeStyle(), request));
        fleet.engine(fleet.prefill()).crash(Duration.ofMillis(100));
        eventually("the producer restarted", () -> fleet.engine(fleet.prefill()).isUp());
        try {
            List<GenerateResponse> events = connector.decode(ready.handoff()).collect().asList().await()
                    .atMost(Legs.WAIT);
            // a consumer that recovered (e.g. by prefilling itself) must still give the right answer
            assertEquals(fleet.aggregatedText(request), Legs.text(events), "silently wrong output");
        } catch (EngineException expected) {
            assertTrue(expected.sentToEngine() || expected.retryable(), expected.getMessage());
        }
    }

    @Test
    void consumerDiesMidStream() throws Exception {
        PrefillResult.Ready ready = ready(plan(aNativeStyle(), request(400)));
        CompletableFuture<Void> firstToken = new CompletableFuture<>();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        connector.decode(ready.handoff()).subscribe().with(e -> firstToken.complete(null),
                failure::complete, () -> failure.complete(null));
        crashTheConsumerAfterTheFirstToken(firstToken, failure);
    }

    /** Crashes the consumer once the decode's first token is out: the leg must fail, and never be retried. */
    void crashTheConsumerAfterTheFirstToken(CompletableFuture<Void> firstToken, CompletableFuture<Throwable> failure)
            throws Exception {
        firstToken.get(Legs.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        fleet.engine(fleet.decode()).crash(Duration.ofMillis(100));
        Throwable t = failure.get(Legs.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        EngineException e = assertInstanceOf(EngineException.class, t, "a cut stream fails the leg");
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable(), "tokens were already relayed");
    }

    @Test
    void aSilentProducerTimesOut() throws Exception {
        Duration silence = fleet.idleTimeout().plusSeconds(1);
        fleet.engine(fleet.prefill()).delayAdmission(silence);
        EngineException e = assertThrows(EngineException.class,
                () -> connector.prefill(plan(aNativeStyle(), request(8))).await().atMost(Legs.WAIT));
        assertTrue(e.sentToEngine());
        // let the engine get to the abandoned request before the hold check moves the clock
        Thread.sleep(silence.toMillis() - fleet.idleTimeout().toMillis() + 300);
    }
}
