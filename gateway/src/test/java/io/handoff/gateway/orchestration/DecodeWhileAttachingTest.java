package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.assertOneTerminalError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Context-first: the decode leg leaves while the write that records the producer's hold and attaches the decode is
 * in flight; the session's end still waits for that write, and a refused write stops the decode (docs/api.md,
 * "Context-first").
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class DecodeWhileAttachingTest extends FleetTestSupport {

    @Inject
    SessionService service;

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

    @Test
    void aDecodeWhoseAttachingWriteIsRefusedIsStoppedAndTheSessionLeftAsEndedElsewhere() {
        FamilyEngines vllm = fleet().vllm();
        String id = requestId("attach-refused");
        // long enough that the session is released elsewhere before the prefill answers, however slow the machine
        vllm.slowPrefill(Duration.ofSeconds(3));
        StreamingGenerate call = start(request(FleetRoutes.VLLM_CONTEXT_FIRST, id, 400)); // 2 s of decode at 5 ms
        Session allocated = sessions.awaitOne(id, "allocated", s -> s.state() == SessionState.ALLOCATED);

        // another replica ends the session (no lease keeper runs in this profile to notice it first): the write that
        // would attach the decode is refused once the prefill answers, after the decode leg left
        service.release(SimulatedFleetProfile.TENANT, allocated.id(), "released elsewhere", OptionalLong.empty())
                .await().atMost(StreamingGenerate.WAIT);

        List<GenerateResponse> events = call.awaitEnd();
        GenerateResponse error = assertOneTerminalError(events, id);
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, error.getError().getCode(), error.toString());
        assertTrue(events.stream().filter(GenerateResponse::hasToken).count() < 400, "the decode was stopped");
        awaitNothingRunning(vllm);
        // what the prefill holds is recorded on the ended session, as when any end is not this run's to write, and
        // discharged by the reaper: the run left the session as the other replica ended it
        Session after = awaitCleanedUp(id);
        assertEquals(SessionState.RELEASED, after.state());
        assertEquals("released elsewhere", after.terminalReason());
        // a decode stopped before it pulled leaves the parked KV to the engine's own timer (vLLM has no release call)
        vllm.advanceClock(EngineFleet.HOLD.plusSeconds(1));
        awaitNoKvPinned(vllm);
    }
}
