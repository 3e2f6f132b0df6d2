package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route whose prefill pool chooses by prefix-affinity sends requests that share a prompt prefix to the same prefill
 * engine, which then finds the prefix in its cache. With least-outstanding the second of two requests on an idle pool
 * would go to the other endpoint.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class PrefixAffinityRouteTest extends FleetTestSupport {

    /** A shared document, longer than the 512 characters the route's prefix key reads. */
    private static final String DOCUMENT = "Affinity document: "
            + "a prefill engine that computed this prompt keeps its blocks. ".repeat(12);

    @Test
    void twoRequestsSharingAPrefixReachTheSamePrefillEngine() {
        FamilyEngines vllm = fleet().vllm();
        List<SimEngine> prefills = List.of(vllm.prefill(), vllm.secondPrefill());
        long[] requests = stats(prefills, "requests_total");
        long[] hits = stats(prefills, "prefix_cache_hit_tokens");

        for (String question : List.of("What does it keep?", "Which engine computed it?")) {
            String id = requestId("prefix-affinity");
            GenerateRequest request = GenerateRequest.newBuilder().setRequestId(id)
                    .setModel(FleetRoutes.VLLM_PREFIX_AFFINITY).setPrompt(DOCUMENT + question + " " + id)
                    .setStopping(StoppingOptions.newBuilder().setMaxTokens(8)).build();
            List<GenerateResponse> events = run(request);
            assertFinishedOnce(events, id, FinishReason.FINISH_REASON_LENGTH);
            sessions.awaitOne(id, "COMPLETE", s -> s.state() == SessionState.COMPLETE);
        }

        long[] requestsNow = stats(prefills, "requests_total");
        long[] hitsNow = stats(prefills, "prefix_cache_hit_tokens");
        int chosen = requestsNow[0] - requests[0] == 2 ? 0 : 1;
        int other = 1 - chosen;
        assertEquals(2, requestsNow[chosen] - requests[chosen], "one prefill engine took both requests");
        assertEquals(0, requestsNow[other] - requests[other], "the other took none");
        assertTrue(hitsNow[chosen] - hits[chosen] >= 16, "the second request found the document's blocks cached");
        assertEquals(0, hitsNow[other] - hits[other]);
        awaitNoKvPinned(vllm);
    }

    private static long[] stats(List<SimEngine> engines, String name) {
        return engines.stream().mapToLong(e -> e.stat(name)).toArray();
    }
}
