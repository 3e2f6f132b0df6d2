package io.handoff.chaos;

import com.google.protobuf.Duration;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import java.util.concurrent.TimeUnit;

/**
 * OpenEngineKv over gRPC, each call with a deadline, each answer that shows a session recorded as an observation.
 */
final class KvCalls {

    private final History history;

    KvCalls(History history) {
        this.history = history;
    }

    static AllocateKvSessionRequest allocation(String requestId, String model, String key, long leaseMs) {
        return AllocateKvSessionRequest.newBuilder().setRequestId(requestId).setModel(model).setIdempotencyKey(key)
                .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST)
                .setLease(Duration.newBuilder().setSeconds(leaseMs / 1000).setNanos((int) (leaseMs % 1000) * 1_000_000))
                .build();
    }

    /** One allocation attempt; a deadline that passes drops the answer, as a client that gave up would. */
    KvSession allocate(Replicas.Target t, AllocateKvSessionRequest req, long deadlineMs) {
        long start = history.now();
        long invoked = System.nanoTime();
        try {
            KvSession s = stub(t, deadlineMs).allocateKvSession(req);
            observe(s, invoked, "allocate");
            history.allocated(req.getIdempotencyKey(), s.getRef().getSessionId(), invoked, System.nanoTime());
            history.op("allocate", t.replicaId(), start, req.getIdempotencyKey(), s.getRef().getSessionId(), "OK",
                    s.getState().name());
            return s;
        } catch (StatusRuntimeException e) {
            history.op("allocate", t.replicaId(), start, req.getIdempotencyKey(), null, code(e), message(e));
            throw e;
        }
    }

    KvSession get(Replicas.Target t, String session, long deadlineMs) {
        return call("get", t, session, deadlineMs, () -> stub(t, deadlineMs)
                .getKvSession(GetKvSessionRequest.newBuilder().setSessionId(session).build()));
    }

    KvSession renew(Replicas.Target t, String session, long leaseMs, long deadlineMs) {
        return call("renew", t, session, deadlineMs, () -> stub(t, deadlineMs).renewKvSession(
                RenewKvSessionRequest.newBuilder().setSessionId(session)
                        .setLease(Duration.newBuilder().setSeconds(leaseMs / 1000)
                                .setNanos((int) (leaseMs % 1000) * 1_000_000)).build()));
    }

    KvSession release(Replicas.Target t, String session, long deadlineMs) {
        return call("release", t, session, deadlineMs, () -> stub(t, deadlineMs).releaseKvSession(
                ReleaseKvSessionRequest.newBuilder().setSessionId(session).setReason("chaos client").build())
                .getSession());
    }

    private interface Call {
        KvSession run();
    }

    private KvSession call(String kind, Replicas.Target t, String session, long deadlineMs, Call call) {
        long start = history.now();
        long invoked = System.nanoTime();
        try {
            KvSession s = call.run();
            observe(s, invoked, kind);
            history.op(kind, t.replicaId(), start, null, session, "OK", s.getState().name());
            return s;
        } catch (StatusRuntimeException e) {
            history.op(kind, t.replicaId(), start, null, session, code(e), message(e));
            throw e;
        }
    }

    private void observe(KvSession s, long invoked, String via) {
        history.observe(s.getRef().getSessionId(), s.getState().name(), s.getEpoch(), invoked, System.nanoTime(), via);
    }

    private static OpenEngineKvGrpc.OpenEngineKvBlockingStub stub(Replicas.Target t, long deadlineMs) {
        return OpenEngineKvGrpc.newBlockingStub(t.channel()).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
    }

    static String code(StatusRuntimeException e) {
        return e.getStatus().getCode().name();
    }

    static String message(StatusRuntimeException e) {
        String d = e.getStatus().getDescription();
        Metadata trailers = Status.trailersFromThrowable(e);
        String code = trailers == null ? null
                : trailers.get(Metadata.Key.of("handoff-error-code", Metadata.ASCII_STRING_MARSHALLER));
        return (code == null ? "" : code + ": ") + (d == null ? "" : d);
    }
}
