package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.EngineError;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.handoff.gateway.testing.GenerateEvents.assertOneTerminalError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A decode engine that hangs mid-stream (its connection open, no more bytes): past the route's
 * decode-idle-timeout the gateway ends the request with one terminal EngineError, which is not retryable because
 * tokens were already relayed, and stops the leg on the engine.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class DecodeSilenceTest extends FleetTestSupport {

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_STALLING_DECODE, FleetRoutes.VLLM_BYPASS_STALLING_DECODE})
    void aDecodeSilentMidStreamFailsOnceAndIsNotRetryable(String route) {
        FamilyEngines vllm = fleet().vllm();
        long aborts = vllm.decode().stat("requests_aborted");
        String id = requestId("silent");
        GenerateRequest request = request(route, id, 2000);
        StreamingGenerate call = start(request.toBuilder().setStopping(request.getStopping().toBuilder().setIgnoreEos(true))
                .build());
        call.awaitTokens(10);
        fleet().stallingVllmDecode().stall();
        try {
            EngineError error = assertOneTerminalError(call.awaitEnd(), id).getError();

            assertEquals(ErrorCode.ERROR_CODE_INTERNAL, error.getCode(), error.toString());
            assertTrue(error.getMessage().contains("silent"), error.getMessage());
            assertFalse(error.getRetryable(), "tokens were relayed already: " + error);
            Awaitility.await("the decode engine saw the abort").atMost(StreamingGenerate.WAIT)
                    .until(() -> vllm.decode().stat("requests_aborted") > aborts);
            assertTrue(call.tokensReceived() >= 10 && call.tokensReceived() < 2000);
        } finally {
            fleet().stallingVllmDecode().resume();
        }
        if (route.equals(FleetRoutes.VLLM_STALLING_DECODE)) {
            sessions.awaitOne(id, "FAILED with its cleanup done",
                    s -> s.state() == SessionState.FAILED && s.pendingObligations().isEmpty());
        }
        awaitNothingRunning(vllm);
        awaitNoKvPinned(vllm);
    }
}
