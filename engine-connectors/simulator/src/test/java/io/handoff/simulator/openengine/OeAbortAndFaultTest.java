package io.handoff.simulator.openengine;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.AllRequests;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimFleet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OeAbortAndFaultTest extends OeTestSupport {

    private static AbortRequest byId(String id) {
        return AbortRequest.newBuilder().setRequestId(id).build();
    }

    @Test
    void abortStatusesFollowUpstream() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OeClient c = client(p);
        StatusRuntimeException none = assertThrows(StatusRuntimeException.class,
            () -> c.control.abort(AbortRequest.getDefaultInstance()));
        assertEquals(Status.Code.INVALID_ARGUMENT, none.getStatus().getCode());
        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class, () -> c.control.abort(byId("x")));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
        KvSessionRef ref = readyRef(c.run(request("done", PROMPT, 4)));
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, c.control.abort(byId("done")).getStatus());
        // without abort cleanup, Abort(kv_session) of parked KV changes nothing and says so
        AbortRequest bySession = AbortRequest.newBuilder().setKvSession(ref).build();
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, c.control.abort(bySession).getStatus());
        assertEquals(1, p.parkedSessions());
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED,
            c.control.abort(AbortRequest.newBuilder().setAllRequests(AllRequests.getDefaultInstance()).build())
                .getStatus());
    }

    @Test
    void abortCleanupFreesParkedKvOnAbortBySession() {
        OpenEngineConfig cfg = cfg(Role.PREFILL);
        cfg.abortCleanup = true;
        OpenEngineSimEngine p = start(new OpenEngineSimEngine(cfg));
        OeClient c = client(p);
        KvSessionRef ref = readyRef(c.run(request("r", PROMPT, 4)));
        AbortRequest bySession = AbortRequest.newBuilder().setKvSession(ref).build();
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, c.control.abort(bySession).getStatus());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_abort"));
        assertEquals(0, p.stat("aborts_repeated_total"));
        StatusRuntimeException again = assertThrows(StatusRuntimeException.class, () -> c.control.abort(bySession));
        assertEquals(Status.Code.NOT_FOUND, again.getStatus().getCode());
        assertEquals(1, p.stat("aborts_repeated_total"), "the session's KV was discharged already: a repeat");
        assertEquals(2, p.stat("aborts_total"));
    }

    @Test
    void abortOfARunningPrefillEndsItWithOneCancelledErrorAndFreesItsKv() {
        OpenEngineConfig cfg = cfg(Role.PREFILL);
        cfg.prefillLatencyMs = 5_000;
        OpenEngineSimEngine p = start(new OpenEngineSimEngine(cfg));
        OeClient c = client(p);
        OeClient.Stream s = c.generate(request("slow", PROMPT, 4));
        await().atMost(Duration.ofSeconds(5)).until(() -> p.stat("kv_blocks_pinned_now") > 0);
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, c.control.abort(byId("slow")).getStatus());
        assertEquals(Status.Code.OK, s.awaitStatus().getCode());
        assertEquals(1, s.events.size());
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, s.events.get(0).getError().getCode());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_abort"));
    }

    @Test
    void abortOfAStreamingDecodeFinishesItCancelledWithUsage() {
        OpenEngineConfig cfg = cfg(Role.DECODE);
        cfg.tokenIntervalMs = 50;
        OpenEngineSimEngine d = start(new OpenEngineSimEngine(cfg));
        OeClient c = client(d);
        OeClient.Stream s = c.generate(request("long", PROMPT, 200));
        await().atMost(Duration.ofSeconds(5)).until(() -> s.events.size() >= 2);
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, c.control.abort(byId("long")).getStatus());
        assertEquals(Status.Code.OK, s.awaitStatus().getCode());
        GenerateResponse last = s.events.get(s.events.size() - 1);
        assertEquals(FinishReason.FINISH_REASON_CANCELLED, last.getFinished().getReason());
        assertEquals(s.events.size() - 1, last.getUsage().getCompletionTokens());
        assertEquals(0, d.stat("running"));
    }

    @Test
    void clientCancelMidStreamFreesTheDecode() {
        OpenEngineConfig cfg = cfg(Role.DECODE);
        cfg.tokenIntervalMs = 50;
        OpenEngineSimEngine d = start(new OpenEngineSimEngine(cfg));
        OeClient.Stream s = client(d).generate(request("long", PROMPT, 200));
        await().atMost(Duration.ofSeconds(5)).until(() -> s.events.size() >= 2);
        s.cancel();
        awaitStat(d, "requests_aborted", 1);
        awaitStat(d, "running", 0);
        assertEquals(d.stat("kv_blocks_total"), d.stat("kv_blocks_free"));
    }

    @Test
    void crashLosesParkedKvAndRestartComesBackWithANewInstance() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);
        OeClient pc = client(p);
        String before = pc.control.getServerInfo(GetServerInfoRequest.getDefaultInstance()).getInstanceId();
        KvSessionRef ref = readyRef(pc.run(request("r", PROMPT, 4)));
        int port = p.grpcPort();
        p.crash(-1);
        OeClient.Stream down = client(d).run(withSession(request("r", PROMPT, 4), ref));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, down.events.get(0).getError().getCode());
        p.restart();
        assertEquals(port, p.grpcPort());
        String after = pc.control.withDeadlineAfter(10, TimeUnit.SECONDS)
            .withWaitForReady().getServerInfo(GetServerInfoRequest.getDefaultInstance()).getInstanceId();
        assertNotEquals(before, after);
        OeClient.Stream lost = client(d).run(withSession(request("r2", PROMPT, 4), ref));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, lost.events.get(0).getError().getCode());
        assertTrue(p.stat("kv_blocks_lost_by_crash") > 0);
    }

    @Test
    void crashMidStreamIsATransportFailureWithoutEngineError() {
        OpenEngineConfig cfg = cfg(Role.DECODE);
        cfg.tokenIntervalMs = 50;
        OpenEngineSimEngine d = start(new OpenEngineSimEngine(cfg));
        OeClient.Stream s = client(d).generate(request("long", PROMPT, 200));
        await().atMost(Duration.ofSeconds(5)).until(() -> s.events.size() >= 2);
        d.crash(-1);
        // the crash fails the stream with UNAVAILABLE and then stops the server at once (shutdownNow); the forced
        // close resets the streams still open, and on a busy host its RST_STREAM CANCEL can reach the client before
        // the UNAVAILABLE trailers: both are what a client sees of an engine that went away mid-stream
        Status.Code code = s.awaitStatus().getCode();
        assertTrue(code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED, code.toString());
        assertTrue(s.events.stream().noneMatch(GenerateResponse::hasError));
    }

    @Test
    void faultsBecomeStatusesAndCuts() {
        OpenEngineSimEngine d = engine(Role.DECODE);
        OeClient c = client(d);
        d.faults().errorNext(503, 1);
        OeClient.Stream refused = c.run(request("a", PROMPT, 4));
        assertEquals(Status.Code.UNAVAILABLE, refused.awaitStatus().getCode());
        assertTrue(refused.events.isEmpty());
        d.faults().cutStreams(3, 1);
        OeClient.Stream cut = c.run(request("b", PROMPT, 10));
        assertEquals(Status.Code.UNAVAILABLE, cut.awaitStatus().getCode());
        assertEquals(3, cut.events.size());
        awaitStat(d, "running", 0);
    }

    @Test
    void validationFailuresAreStatusesBeforeAcceptance() {
        OpenEngineSimEngine p = engine(Role.PREFILL);
        OpenEngineSimEngine d = engine(Role.DECODE);
        KvSessionRef ref = readyRef(client(p).run(request("r", PROMPT, 4)));
        OeClient.Stream mismatch = client(p).run(withSession(request("x", PROMPT, 4), ref));
        assertEquals(Status.Code.FAILED_PRECONDITION, mismatch.awaitStatus().getCode());
        OeClient.Stream model = client(d).run(request("m", PROMPT, 4).toBuilder().setModel("other").build());
        assertEquals(Status.Code.NOT_FOUND, model.awaitStatus().getCode());
        OeClient.Stream empty = client(d).run(request("e", PROMPT, 4).toBuilder().clearPrompt().build());
        assertEquals(Status.Code.INVALID_ARGUMENT, empty.awaitStatus().getCode());
        assertTrue(mismatch.events.isEmpty() && model.events.isEmpty() && empty.events.isEmpty());
    }

    @Test
    void fleetCanRunTheOpenEngineFamilyOnTheSharedClock() {
        try (SimFleet fleet = SimFleet.start(vertx, 0, Map.of("model", "sim-model"), List.of(Family.OPENENGINE))) {
            assertEquals(2, fleet.engines().size());
            OpenEngineSimEngine p = (OpenEngineSimEngine) fleet.get(Family.OPENENGINE, Role.PREFILL);
            OpenEngineSimEngine d = (OpenEngineSimEngine) fleet.get(Family.OPENENGINE, Role.DECODE);
            readyRef(client(p).run(request("r", PROMPT, 4)));
            d.advanceClock(Duration.ofSeconds(61)); // one advance on the shared clock expires the prefill's hold
            awaitStat(p, "freed_by_timeout", 1);
            assertTrue(fleet.describe().get(0).contains("grpc="));
        }
    }
}
