package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A context-first request that ends on its first token ends during its prefill: the producer's answer is the whole
 * answer, no decode is sent, and the session ends RELEASED. What the producer still holds (TRT-LLM keeps even a
 * finished context until its timer) is recorded, held by the engine until then.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class FinishedInPrefillTest extends FleetTestSupport {

    @ParameterizedTest
    @ValueSource(strings = {FleetRoutes.VLLM_CONTEXT_FIRST, FleetRoutes.TRTLLM_CONTEXT_FIRST})
    void aRequestThatEndsOnItsFirstTokenEndsReleasedWithoutADecode(String route) {
        FamilyEngines family = fleet().family(FleetRoutes.FAMILY_OF.get(route));
        String id = requestId("first-token-eos");
        GenerateRequest request = request(route, id, 20).toBuilder()
                .setPrompt(prompt(id) + " [[eos:0]]").build();
        long decodeRequests = family.decode().stat("requests_total");

        List<GenerateResponse> events = run(request);

        assertFinishedOnce(events, id, FinishReason.FINISH_REASON_STOP);
        assertEquals(ReferenceAnswers.text(family, request.getPrompt(), 20), text(events));
        assertEquals(decodeRequests, family.decode().stat("requests_total"), "a decode was sent");
        Session session = sessions.awaitOne(id, "RELEASED with its cleanup done",
                s -> s.isTerminal() && s.pendingObligations().isEmpty());
        assertEquals(SessionState.RELEASED, session.state(), session.terminalReason());
        assertTrue(session.obligations().stream().allMatch(o -> o.status() == CleanupObligation.Status.ENGINE_HELD),
                session.obligations().toString());
        if (session.engineMayHoldKv(clock.instant())) {
            assertTrue(family.prefill().stat("kv_blocks_pinned_now") > 0, "recorded as held, but not pinned");
            family.advanceClock(EngineFleet.HOLD.plusSeconds(1));
        }
        awaitNoKvPinned(family);
    }
}
