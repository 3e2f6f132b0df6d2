package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A decode endpoint that cannot be reached before its leg attaches: vLLM's transfer parameters name the producer,
 * not the consumer, so the connector allows the decode on another endpoint of the pool, and the answer is whole.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class DecodeRetryElsewhereTest extends FleetTestSupport {

    @Inject
    RouteRegistry routes;

    @Test
    void anUnreachableDecodeEndpointIsRetriedOnAnother() {
        FamilyEngines vllm = fleet().vllm();
        vllm.secondDecode().crash(-1);
        PooledEndpoint unreachable = routes.named(FleetRoutes.VLLM_TWO_DECODES).orElseThrow().decode()
                .member("decode-1").orElseThrow();
        long liveDecodes = vllm.decode().stat("requests_total");

        // the pool alternates between its idle endpoints: of two requests, one is sent to decode-1 first
        for (int i = 0; i < 2; i++) {
            String id = requestId("retry-elsewhere");
            GenerateRequest request = request(FleetRoutes.VLLM_TWO_DECODES, id, 20);
            List<GenerateResponse> events = run(request);
            assertFinishedOnce(events, id, FinishReason.FINISH_REASON_LENGTH);
            assertEquals(ReferenceAnswers.text(vllm, request.getPrompt(), 20), text(events));
            sessions.awaitOne(id, "COMPLETE", s -> s.state() == SessionState.COMPLETE);
        }

        assertFalse(unreachable.breaker().lastFailure().isEmpty(), "no request was sent to decode-1 first");
        assertEquals(liveDecodes + 2, vllm.decode().stat("requests_total"), "both answers came from decode-0");
        assertEquals(0, unreachable.outstanding());
        awaitNoKvPinned(vllm);
    }
}
