package io.handoff.connector.openengine;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Context;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.simulator.Role;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.smallrye.mutiny.helpers.test.AssertSubscriber;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LifecycleAndFailureTest extends SimulatorSupport {

    @Test
    void abortDuringPrefillEndsTheLegCancelledAndFreesTheKv() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.prefillLatencyMs = 10_000);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        Handoff h = plan(conn, "slow-1", request(4), p, d);
        UniAssertSubscriber<PrefillResult> sub = conn.prefill(h).subscribe().withSubscriber(UniAssertSubscriber.create());
        await().atMost(WAIT).until(() -> p.stat("kv_blocks_pinned_now") > 0);
        conn.abort(h, Leg.PREFILL).await().atMost(WAIT);
        EngineException e = (EngineException) sub.awaitFailure(WAIT).getFailure();
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, e.code());
        assertFalse(e.retryable());
        assertTrue(e.sentToEngine());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_abort"));
    }

    @Test
    void cancellingThePrefillSubscriptionCancelsTheGrpcCall() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.prefillLatencyMs = 10_000);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        UniAssertSubscriber<PrefillResult> sub = conn.prefill(plan(conn, "slow-2", request(4), p, d)).subscribe()
            .withSubscriber(UniAssertSubscriber.create());
        await().atMost(WAIT).until(() -> p.stat("kv_blocks_pinned_now") > 0);
        sub.cancel();
        await().atMost(WAIT).until(() -> p.stat("requests_aborted") == 1 && p.stat("kv_blocks_pinned_now") == 0);
    }

    @Test
    void abortAfterPrefillReadyLeavesTheKvToTheEngineUntilItsHoldEnds() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        Handoff h = plan(conn, "r", request(4), p, d);
        HeldKv held = ready(conn, h).held().get(0);
        conn.abort(h, Leg.PREFILL).await().atMost(WAIT); // ALREADY_FINISHED: a success, and nothing changes
        assertEquals(1, p.parkedSessions());
        DischargeResult early = conn.discharge(held).await().atMost(WAIT);
        assertEquals(DischargeResult.Outcome.ENGINE_HOLDS, early.outcome());
        assertEquals(held.heldUntil(), early.heldUntil());
        assertEquals(early, conn.discharge(held).await().atMost(WAIT), "discharge is idempotent");

        p.advanceClock(Duration.ofSeconds(61));
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_timeout"));
        assertEquals(DischargeResult.Outcome.RELEASED, conn.discharge(held).await().atMost(WAIT).outcome());
        assertEquals(0, d.stat("kv_blocks_pinned_now"));
    }

    @Test
    void withAbortCleanupDischargeFreesParkedKvAtOnce() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.abortCleanup = true);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d, "abort-cleanup", "true");
        HeldKv held = ready(conn, plan(conn, "r", request(4), p, d)).held().get(0);
        assertTrue(held.releasable());
        assertTrue(conn.probe(endpoint("prefill-0", p)).await().atMost(WAIT).healthy());
        assertEquals(DischargeResult.Outcome.RELEASED, conn.discharge(held).await().atMost(WAIT).outcome());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_abort"));
        // again, from "another replica": the engine answers NOT_FOUND, which is released too
        assertEquals(DischargeResult.Outcome.RELEASED, connector(p, d, "abort-cleanup", "true").discharge(held)
            .await().atMost(WAIT).outcome());
    }

    /**
     * A participant's release discharges its KV as the gateway answers it: the discharge starts inside the client's
     * call, which has ended (its gRPC context cancelled) by the time the engine answers, or even before it is sent.
     */
    @Test
    void aDischargeStartedInsideACallThatEndedStillReachesTheEngine() throws Exception {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.abortCleanup = true);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d, "abort-cleanup", "true");
        HeldKv held = ready(conn, plan(conn, "r", request(4), p, d)).held().get(0);
        Context.CancellableContext clientCall = Context.current().withCancellation();
        clientCall.cancel(null);
        DischargeResult result = clientCall.call(() -> conn.discharge(held).await().atMost(WAIT));
        assertEquals(DischargeResult.Outcome.RELEASED, result.outcome(), () -> String.valueOf(result.error()));
        assertEquals(1, p.stat("freed_by_abort"));
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
    }

    /** A client that went away has its legs aborted from inside its own call, cancelled by then. */
    @Test
    void anAbortStartedInsideACallThatEndedStillReachesTheEngine() throws Exception {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.prefillLatencyMs = 10_000);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        Handoff h = plan(conn, "gone-1", request(4), p, d);
        UniAssertSubscriber<PrefillResult> sub = conn.prefill(h).subscribe().withSubscriber(UniAssertSubscriber.create());
        await().atMost(WAIT).until(() -> p.stat("kv_blocks_pinned_now") > 0);
        Context.CancellableContext clientCall = Context.current().withCancellation();
        clientCall.cancel(null);
        clientCall.call(() -> conn.abort(h, Leg.PREFILL).await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, ((EngineException) sub.awaitFailure(WAIT).getFailure()).code());
        assertEquals(1, p.stat("freed_by_abort"));
    }

    /**
     * The parked session of a cancelled prefill is named only in the PrefillReady that was lost. Its hold is
     * discharged as the gateway discharges every obligation, as releasable (the gateway does not keep the flag): the
     * engine's timer is the answer, not a retry that can never succeed.
     */
    @Test
    void aHoldOfACancelledPrefillIsLeftToTheEnginesTimer() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> c.abortCleanup = true);
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d, "abort-cleanup", "true");
        Handoff h = plan(conn, "lost-ready", request(4), p, d);
        HeldKv reported = conn.heldAfterCancelledPrefill(h).get(0);
        HeldKv asDischarged = new HeldKv(reported.id(), reported.endpoint(), reported.resource(), reported.handle(),
            reported.heldUntil(), true);
        DischargeResult result = conn.discharge(asDischarged).await().atMost(WAIT);
        assertEquals(DischargeResult.Outcome.ENGINE_HOLDS, result.outcome());
        assertEquals(reported.heldUntil(), result.heldUntil());
        assertEquals(0, p.stat("aborts_total"), "no Abort was sent");
    }

    @Test
    void abortDuringDecodeFinishesTheStreamCancelled() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> c.tokenIntervalMs = 50);
        EngineConnector conn = connector(p, d);
        Handoff h = ready(conn, plan(conn, "r", request(200), p, d)).handoff();
        AssertSubscriber<GenerateResponse> sub = conn.decode(h).subscribe()
            .withSubscriber(AssertSubscriber.create(Long.MAX_VALUE));
        await().atMost(WAIT).until(() -> sub.getItems().size() >= 2);
        conn.abort(h, Leg.DECODE).await().atMost(WAIT);
        sub.awaitCompletion(WAIT);
        List<GenerateResponse> events = sub.getItems();
        assertEquals(FinishReason.FINISH_REASON_CANCELLED, events.get(events.size() - 1).getFinished().getReason());
        await().atMost(WAIT).until(() -> d.stat("running") == 0);
    }

    @Test
    void cancellingTheDecodeSubscriptionCancelsTheGrpcCall() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> c.tokenIntervalMs = 50);
        EngineConnector conn = connector(p, d);
        Handoff h = ready(conn, plan(conn, "r", request(200), p, d)).handoff();
        AssertSubscriber<GenerateResponse> sub = conn.decode(h).subscribe()
            .withSubscriber(AssertSubscriber.create(Long.MAX_VALUE));
        await().atMost(WAIT).until(() -> sub.getItems().size() >= 2);
        sub.cancel();
        await().atMost(WAIT).until(() -> d.stat("requests_aborted") == 1 && d.stat("running") == 0);
        assertEquals(d.stat("kv_blocks_total"), d.stat("kv_blocks_free"));
    }

    @Test
    void prefillEngineDyingAfterReadyMakesTheDecodeFailWithSessionNotFound() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        Handoff h = ready(conn, plan(conn, "r", request(4), p, d)).handoff();
        p.crash(-1);
        p.restart(); // back with a new instance: the session it minted is gone
        EngineException e = failureOf(() -> collect(conn.decode(h)));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, e.code());
        assertFalse(e.retryable(), "the unchanged request cannot succeed: the gateway must prefill again");
        assertTrue(e.sentToEngine());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(0, d.stat("kv_blocks_pinned_now"));
    }

    @Test
    void decodeEngineDyingMidStreamIsANonRetryableFailure() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> c.tokenIntervalMs = 50);
        EngineConnector conn = connector(p, d);
        Handoff h = ready(conn, plan(conn, "r", request(200), p, d)).handoff();
        AssertSubscriber<GenerateResponse> sub = conn.decode(h).subscribe()
            .withSubscriber(AssertSubscriber.create(Long.MAX_VALUE));
        await().atMost(WAIT).until(() -> sub.getItems().size() >= 2);
        d.crash(-1);
        EngineException e = (EngineException) sub.awaitFailure(WAIT).getFailure();
        assertEquals(ErrorCode.ERROR_CODE_INTERNAL, e.code());
        assertFalse(e.retryable(), "the KV was pulled: retrying the same decode cannot work");
        assertTrue(e.sentToEngine());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
    }

    @Test
    void aDecodeDeadlineCancelsTheCallOnTheEngine() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> c.tokenIntervalMs = 100);
        EngineConnector conn = connector(p, d, "decode-timeout-ms", "300");
        Handoff h = ready(conn, plan(conn, "r", request(100), p, d)).handoff();
        EngineException e = failureOf(() -> collect(conn.decode(h)));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, e.code());
        assertFalse(e.retryable());
        await().atMost(WAIT).until(() -> d.stat("requests_aborted") == 1 && d.stat("running") == 0);
    }

    @Test
    void anUnreachableEngineIsRetryableAndNothingWasSent() {
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        Endpoint gone = endpoint("prefill-0", p);
        p.crash(-1);
        EngineConnector conn = connector(List.of(gone), List.of(endpoint("decode-0", d)), Map.of());
        Handoff h = conn.plan("r", ScheduleStyle.CONTEXT_FIRST, request(4), gone,
            endpoint("decode-0", d));
        EngineException e = failureOf(() -> conn.prefill(h).await().atMost(WAIT));
        assertFalse(e.sentToEngine());
        assertTrue(e.retryable());
    }

    @Test
    void engineRefusalsBeforeAcceptanceKeepTheirMeaning() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        p.faults().errorNext(429, 1);
        EngineException overloaded = failureOf(() -> conn.prefill(plan(conn, "a", request(4), p, d))
            .await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, overloaded.code());
        assertTrue(overloaded.retryable());
        // a prefill endpoint used as a decode: the engine refuses the kv.session (ROLE_MISMATCH)
        Handoff h = ready(conn, plan(conn, "b", request(4), p, d)).handoff().withDecode(endpoint("decode-0", p));
        EngineException role = failureOf(() -> collect(conn.decode(h)));
        assertEquals(ErrorCode.ERROR_CODE_ROLE_MISMATCH, role.code());
    }

    @Test
    void aCallTheEngineCancelsIsRetryableOnAPrefillOnly() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        // 499: the engine answers CANCELLED, as one shutting down does with the calls it drops
        p.faults().errorNext(499, 1);
        EngineException prefill = failureOf(() -> conn.prefill(plan(conn, "a", request(4), p, d))
            .await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, prefill.code());
        assertTrue(prefill.retryable(), "another prefill endpoint can take it");
        assertTrue(prefill.sentToEngine());

        Handoff h = ready(conn, plan(conn, "b", request(4), p, d)).handoff();
        d.faults().errorNext(499, 1);
        EngineException decode = failureOf(() -> collect(conn.decode(h)));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, decode.code());
        assertFalse(decode.retryable(), "a decode that reached the engine may have pulled the KV");
    }
}
