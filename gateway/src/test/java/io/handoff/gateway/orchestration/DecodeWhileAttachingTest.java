package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.FinishReason;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Context-first: the decode leg leaves while the write that records the producer's hold and attaches the decode is
 * in flight, and the session's end still waits for that write (docs/api.md, "Context-first").
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class DecodeWhileAttachingTest extends FleetTestSupport {

    @Test
    void theDecodeStreamsWhileTheAttachingWriteWaitsAndTheEndFollowsIt() {
        FamilyEngines vllm = fleet().vllm();
        String id = requestId("decode-while-attaching");
        long decodes = vllm.decode().stat("requests_total");
        // a prefill long enough that the store's writes are paused before it answers, however slow the machine
        vllm.slowPrefill(Duration.ofSeconds(2));
        StreamingGenerate call = start(request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 8));
        sessions.awaitOne(id, "allocated", s -> s.state() == SessionState.ALLOCATED);

        // no write lands until unpaused, or for 14 s (within the store's timeout of 15 s, which starts once the prefill
        // answered): the session cannot become ATTACHED. Had the decode waited for that write, no token could come in
        // the 12 s this waits.
        assertEquals("+OK", RedisTestResource.server().command("CLIENT PAUSE 14000 WRITE"));
        try {
            Awaitility.await("the decode's tokens, with the store's writes paused").atMost(Duration.ofSeconds(12))
                    .until(() -> call.tokensReceived() >= 8);
            assertTrue(vllm.decode().stat("requests_total") > decodes, "the decode leg reached its engine");
            assertFalse(call.ended(), "the stream ends only once the session's end is written, after the attach");
        } finally {
            RedisTestResource.server().command("CLIENT UNPAUSE");
        }

        assertFinishedOnce(call.awaitEnd(), id, FinishReason.FINISH_REASON_LENGTH);
        Session ended = sessions.awaitOne(id, "ended", Session::isTerminal);
        assertEquals(SessionState.COMPLETE, ended.state(), ended.terminalReason());
        assertEquals(4, ended.epoch(), "ALLOCATED 1, READY 2 and ATTACHED 3 in one write, then COMPLETE 4");
        assertTrue(ended.pendingObligations().isEmpty(), "the pulled hold was discharged with the end: "
                + ended.obligations());
        awaitNoKvPinned(vllm);
    }
}
