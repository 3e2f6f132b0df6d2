package io.handoff.gateway.orchestration;

import io.grpc.Status;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.simulator.EngineStats;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that cancels its Generate at each phase, on each engine and style: the session ends CANCELLED, the legs
 * that ran are aborted on their engines, and no KV stays pinned once cleanup ran. Where an engine can only free
 * parked KV by its own timer, the obligation is recorded as ENGINE_HELD until then, and the KV goes when it ends.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GenerateCancellationTest extends FleetTestSupport {

    enum Phase { DURING_PREFILL, AFTER_FIRST_TOKEN, MID_DECODE }

    /** Long enough for the test to see the prefill running and cancel it, whatever the machine's load. */
    private static final Duration SLOW_PREFILL = Duration.ofSeconds(3);

    @ParameterizedTest(name = "{0} cancelled {1}")
    @CsvSource({
            FleetRoutes.VLLM_CONTEXT_FIRST + ", DURING_PREFILL",
            FleetRoutes.VLLM_CONTEXT_FIRST + ", AFTER_FIRST_TOKEN",
            FleetRoutes.VLLM_CONTEXT_FIRST + ", MID_DECODE",
            FleetRoutes.SGLANG_CONCURRENT + ", DURING_PREFILL",
            FleetRoutes.SGLANG_CONCURRENT + ", AFTER_FIRST_TOKEN",
            FleetRoutes.SGLANG_CONCURRENT + ", MID_DECODE",
            FleetRoutes.SGLANG_GENERATION_FIRST + ", DURING_PREFILL",
            FleetRoutes.SGLANG_GENERATION_FIRST + ", AFTER_FIRST_TOKEN",
            FleetRoutes.SGLANG_GENERATION_FIRST + ", MID_DECODE",
            FleetRoutes.TRTLLM_CONTEXT_FIRST + ", DURING_PREFILL",
            FleetRoutes.TRTLLM_CONTEXT_FIRST + ", AFTER_FIRST_TOKEN",
            FleetRoutes.TRTLLM_CONTEXT_FIRST + ", MID_DECODE",
            FleetRoutes.TRTLLM_GENERATION_FIRST + ", DURING_PREFILL",
            FleetRoutes.TRTLLM_GENERATION_FIRST + ", AFTER_FIRST_TOKEN",
            FleetRoutes.TRTLLM_GENERATION_FIRST + ", MID_DECODE"})
    void aCancelledGenerateEndsCancelledWithItsLegsAborted(String route, Phase phase) {
        FamilyEngines family = fleet().family(FleetRoutes.FAMILY_OF.get(route));
        String id = requestId("cancel-" + phase);
        long prefillAborts = family.prefill().stat("requests_aborted");
        long decodeAborts = family.decode().stat("requests_aborted");
        long repeatedAborts = repeatedAborts(family);
        if (phase == Phase.DURING_PREFILL) {
            family.slowPrefill(SLOW_PREFILL);
        }
        StreamingGenerate call = start(request(route, id, 400));

        switch (phase) {
            case DURING_PREFILL -> awaitStat(family.prefill(), "kv_blocks_pinned_now", 1);
            case AFTER_FIRST_TOKEN -> call.awaitTokens(1);
            case MID_DECODE -> call.awaitTokens(30);
        }
        call.cancel();
        family.slowPrefill(Duration.ofMillis(EngineFleet.PREFILL_LATENCY_MS));

        assertEquals(Status.Code.CANCELLED, call.awaitStatus().getStatus().getCode());
        assertTrue(call.tokensReceived() < 400, "the stream ran to its end before the cancel");
        Session session = awaitCleanedUp(id);
        assertEquals(SessionState.CANCELLED, session.state(), session.terminalReason());
        SimEngine aborted = phase == Phase.DURING_PREFILL ? family.prefill() : family.decode();
        long abortsBefore = phase == Phase.DURING_PREFILL ? prefillAborts : decodeAborts;
        Awaitility.await(aborted.baseUrl() + " saw the abort").atMost(StreamingGenerate.WAIT)
                .until(() -> aborted.stat("requests_aborted") > abortsBefore);
        awaitNothingRunning(family);
        awaitNoKvPinned(family);
        assertTrue(session.obligations().stream().noneMatch(o -> o.status() == CleanupObligation.Status.ABANDONED),
                session.obligations().toString());
        // one discharge per held KV: a leg's native abort that freed a hold is not followed by the same call again
        assertEquals(repeatedAborts, repeatedAborts(family), "an engine was asked again to abort an id it had freed: "
                + session.obligations());

        // nothing of the cancelled attempt is left on this replica: the same id runs again at once
        assertFinishedOnce(run(request(route, id, 4)), id, FinishReason.FINISH_REASON_LENGTH);
    }

    /**
     * Context-first engines park the prefill's KV until a decode reads it or their timer ends, and have no call that
     * frees it earlier. Cancelled between the legs (the decode held back by the engine), the parked KV is recorded
     * as ENGINE_HELD until the timer, and is gone once the engines' clock passes it.
     */
    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST})
    void cancelledBetweenTheLegsTheParkedKvIsHeldByTheEngineUntilItsTimer(String route) {
        FamilyEngines family = fleet().family(FleetRoutes.FAMILY_OF.get(route));
        String id = requestId("cancel-between");
        long decodeRequests = family.decode().stat("requests_total");
        family.decode().faults().latencyMs(Duration.ofSeconds(5).toMillis());
        StreamingGenerate call = start(request(route, id, 400));
        awaitStat(family.decode(), "requests_total", decodeRequests + 1);
        Instant cancelledAt = clock.instant();
        call.cancel();

        assertEquals(Status.Code.CANCELLED, call.awaitStatus().getStatus().getCode());
        assertEquals(0, call.tokensReceived());
        Session session = sessions.awaitOne(id, "CANCELLED with its cleanup done",
                s -> s.isTerminal() && !s.obligations().isEmpty() && s.pendingObligations().isEmpty());
        assertEquals(SessionState.CANCELLED, session.state(), session.terminalReason());
        CleanupObligation parked = session.obligations().get(0);
        assertEquals(CleanupObligation.Status.ENGINE_HELD, parked.status(), parked.toString());
        assertEquals(route.startsWith("vllm") ? "prefill-0" : "ctx-0", parked.endpoint(), "held on the producer");
        assertNotNull(parked.heldUntil());
        assertFalse(parked.heldUntil().isAfter(cancelledAt.plus(EngineFleet.HOLD)), parked.toString());
        assertTrue(parked.heldUntil().isAfter(cancelledAt), parked.toString());
        assertTrue(session.engineMayHoldKv(clock.instant()));
        assertTrue(family.prefill().stat("kv_blocks_pinned_now") > 0, "the engine holds the parked KV");

        family.advanceClock(EngineFleet.HOLD.plusSeconds(1));
        awaitNoKvPinned(family);
        awaitNothingRunning(family);
    }

    /** Native aborts the family's engines received for an id they had already been asked to abort. */
    private static long repeatedAborts(FamilyEngines family) {
        return family.prefill().stat(EngineStats.ABORTS_REPEATED_TOTAL)
                + family.decode().stat(EngineStats.ABORTS_REPEATED_TOTAL);
    }

    private static void awaitStat(SimEngine engine, String stat, long atLeast) {
        Awaitility.await(engine.baseUrl() + " " + stat + " >= " + atLeast).atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(2)).until(() -> engine.stat(stat) >= atLeast);
    }
}
