package io.handoff.gateway.orchestration;

import io.handoff.gateway.reaper.ReaperConfig;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.EngineError;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertOneTerminalError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An engine lost at each phase of a Generate: the client sees exactly one terminal EngineError, retryable only when
 * the unchanged request can succeed when sent again (nothing was relayed yet); the session ends FAILED with its
 * cleanup done; the surviving engine runs nothing for it; and nothing stays pinned once the engines' own timers
 * passed where they hold parked KV.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GeneratePeerLossTest extends FleetTestSupport {

    @Inject
    ReaperConfig reaperConfig;

    private static FamilyEngines familyOf(String route) {
        return fleet().family(FleetRoutes.FAMILY_OF.get(route));
    }

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.SGLANG_CONCURRENT,
            FleetRoutes.SGLANG_GENERATION_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST,
            FleetRoutes.TRTLLM_GENERATION_FIRST})
    void prefillEngineDownBeforeTheRequest(String route) {
        FamilyEngines family = familyOf(route);
        family.prefill().crash(-1);
        String id = requestId("prefill-down");

        EngineError error = failedWith(run(request(route, id, 50)), id);

        assertTrue(error.getRetryable(), "nothing was relayed and the engine may be back: " + error);
        assertFailedAndCleanedUp(family, id, family.prefill(), family.decode());
    }

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.SGLANG_CONCURRENT,
            FleetRoutes.SGLANG_GENERATION_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST,
            FleetRoutes.TRTLLM_GENERATION_FIRST})
    void prefillEngineCrashesWhileItRuns(String route) {
        FamilyEngines family = familyOf(route);
        String id = requestId("prefill-crash");
        family.slowPrefill(Duration.ofSeconds(3)); // long enough to see it running and crash it, whatever the load
        StreamingGenerate call = start(request(route, id, 50));
        awaitStat(family.prefill(), "kv_blocks_pinned_now", 1);
        family.prefill().crash(-1);

        EngineError error = failedWith(call.awaitEnd(), id);

        assertEquals(0, call.tokensReceived());
        assertTrue(error.getRetryable(), "nothing was relayed and the engine may be back: " + error);
        assertFailedAndCleanedUp(family, id, family.prefill(), family.decode());
    }

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.SGLANG_CONCURRENT,
            FleetRoutes.SGLANG_GENERATION_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST,
            FleetRoutes.TRTLLM_GENERATION_FIRST})
    void decodeEngineDownBeforeItAttaches(String route) {
        FamilyEngines family = familyOf(route);
        family.decode().crash(-1);
        String id = requestId("decode-down");

        EngineError error = failedWith(run(request(route, id, 50)), id);

        assertTrue(error.getRetryable(), "nothing was relayed and the engine may be back: " + error);
        assertFailedAndCleanedUp(family, id, family.decode(), family.prefill());
    }

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.SGLANG_CONCURRENT,
            FleetRoutes.SGLANG_GENERATION_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST,
            FleetRoutes.TRTLLM_GENERATION_FIRST})
    void decodeEngineCrashesMidStream(String route) {
        FamilyEngines family = familyOf(route);
        String id = requestId("decode-crash");
        StreamingGenerate call = start(request(route, id, 400));
        call.awaitTokens(10);
        family.decode().crash(-1);

        EngineError error = failedWith(call.awaitEnd(), id);

        assertFalse(error.getRetryable(), "tokens were relayed already: " + error);
        assertTrue(call.tokensReceived() >= 10 && call.tokensReceived() < 400);
        assertFailedAndCleanedUp(family, id, family.decode(), family.prefill());
    }

    private static EngineError failedWith(List<GenerateResponse> events, String id) {
        EngineError error = assertOneTerminalError(events, id).getError();
        assertNotEquals(ErrorCode.ERROR_CODE_UNSPECIFIED, error.getCode());
        assertFalse(error.getMessage().isBlank());
        return error;
    }

    /**
     * FAILED, the survivor idle; once the lost engine is back, the reaper's retries discharge what could not be
     * discharged while it was down, and no KV stays pinned once the engines' timers passed.
     */
    private void assertFailedAndCleanedUp(FamilyEngines family, String id, SimEngine lost, SimEngine survivor) {
        Session ended = sessions.awaitOne(id, "FAILED with a discharge tried for each obligation",
                s -> s.isTerminal() && s.obligations().stream().allMatch(o -> !o.isPending() || o.attempts() > 0));
        assertEquals(SessionState.FAILED, ended.state(), ended.terminalReason());
        Awaitility.await(survivor.baseUrl() + " runs nothing").atMost(StreamingGenerate.WAIT)
                .until(() -> survivor.stat("running") == 0 && survivor.stat("waiting") == 0);

        lost.restart();
        if (!ended.pendingObligations().isEmpty()) {
            clock.advance(reaperConfig.retryBackoff().plusSeconds(1));
            sweep();
        }
        Session session = sessions.awaitOne(id, "its cleanup done", s -> s.pendingObligations().isEmpty());
        assertTrue(session.obligations().stream().noneMatch(o -> o.status() == CleanupObligation.Status.ABANDONED),
                session.obligations().toString());
        if (session.engineMayHoldKv(clock.instant())) {
            // the engine frees parked KV by its own timer only
            family.advanceClock(EngineFleet.HOLD.plusSeconds(1));
        }
        awaitNothingRunning(family);
        awaitNoKvPinned(family);
    }

    private static void awaitStat(SimEngine engine, String stat, long atLeast) {
        Awaitility.await(engine.baseUrl() + " " + stat + " >= " + atLeast).atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(2)).until(() -> engine.stat(stat) >= atLeast);
    }
}
