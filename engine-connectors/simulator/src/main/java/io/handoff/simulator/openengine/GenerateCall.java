package io.handoff.simulator.openengine;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.simulator.Job;
import io.handoff.simulator.PeerCall;
import java.util.List;

/**
 * One Generate call inside the engine: its response stream, its job, and where its answer stands. Event-loop
 * confined, like the rest of the engine's state.
 *
 * <p>The transport rules live here: once closed, nothing more is written; a stream-cut fault ends the call with a
 * non-OK status and no EngineError, as a dropped connection would.
 */
final class GenerateCall {
    final ServerCallStreamObserver<GenerateResponse> out;
    ParsedRequest request;
    Job job;
    /** The session this call produces (prefill) or pulls (decode), if any. */
    String sessionId;
    PeerCall pull;
    /** The precomputed answer and how much of it was sent (decode and aggregated requests). */
    List<GenerateResponse> answer;
    int nextEvent;
    boolean streaming;
    private final int cutAfter;
    private final Runnable onCut;
    private int sent;
    private boolean closed;

    GenerateCall(ServerCallStreamObserver<GenerateResponse> out, int cutAfter, Runnable onCut) {
        this.out = out;
        this.cutAfter = cutAfter;
        this.onCut = onCut;
    }

    boolean isClosed() {
        return closed;
    }

    /** Writes one event; returns false if the call is (now) closed, e.g. cut by a fault after this event. */
    boolean send(GenerateResponse event) {
        if (closed) {
            return false;
        }
        out.onNext(event);
        sent++;
        if (cutAfter >= 0 && sent >= cutAfter) {
            onCut.run();
            fail(Status.UNAVAILABLE.withDescription("simulated stream cut after " + sent + " events"));
            return false;
        }
        return true;
    }

    /** Ends the stream with gRPC OK. */
    void complete() {
        if (!closed) {
            closed = true;
            out.onCompleted();
        }
    }

    /** Ends the stream with a non-OK status (before acceptance, or a transport failure). */
    void fail(Status status) {
        if (!closed) {
            closed = true;
            out.onError(status.asRuntimeException());
        }
    }

    /** After acceptance: exactly one terminal EngineError, then OK. */
    void failAccepted(ErrorCode code, String message, boolean retryable) {
        if (send(WireEvents.error(request.requestId, code, message, retryable))) {
            complete();
        }
    }

    /** Marks the client gone (cancelled): nothing may be written any more. */
    void markCancelled() {
        closed = true;
    }
}
