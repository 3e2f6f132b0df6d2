package io.handoff.connector.openengine;

import io.grpc.Status;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Leg;
import io.handoff.openengine.v1.EngineError;
import io.handoff.openengine.v1.ErrorCode;
import java.net.ConnectException;

/**
 * Turns what an engine said into the SPI's failure. An EngineError keeps its code and retryable flag (the engine
 * knows best). A non-OK gRPC status is mapped by code; its retryable flag is conservative on a decode leg, because
 * a decode that reached the engine may already have pulled (and so consumed) the parked KV.
 */
final class Failures {
    private Failures() {
    }

    static EngineException fromEngineError(EngineError e, String endpoint) {
        String message = endpoint + ": " + e.getCode() + ": " + e.getMessage();
        return e.getRetryable() ? EngineException.sentRetryable(e.getCode(), message)
            : EngineException.sentFinal(e.getCode(), message);
    }

    /** A protocol breach by the engine: the stream cannot be trusted, and retrying the same engine will not help. */
    static EngineException ruleBroken(String endpoint, String rule) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
            endpoint + " broke the openengine.v1 event rules: " + rule);
    }

    /**
     * @param anyEvent whether the stream had delivered an event: a status after events is a transport failure of an
     *                 accepted request, never a refusal
     */
    static EngineException fromThrowable(Throwable t, Leg leg, boolean anyEvent, String endpoint) {
        if (t instanceof EngineException ee) {
            return ee;
        }
        Status s = Status.fromThrowable(t);
        boolean sent = !neverConnected(t);
        String msg = endpoint + ": " + s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
        if (!sent) {
            return EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL, msg + " (not reached)", t);
        }
        boolean refusedBeforeAcceptance = !anyEvent;
        switch (s.getCode()) {
            case INVALID_ARGUMENT:
            case OUT_OF_RANGE:
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, msg, t);
            case NOT_FOUND:
                // the only NOT_FOUND upstream gives a Generate before acceptance is an unknown model
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, msg, t);
            case ALREADY_EXISTS:
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, msg, t);
            case FAILED_PRECONDITION:
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_ROLE_MISMATCH, msg, t);
            case UNIMPLEMENTED:
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, msg, t);
            case RESOURCE_EXHAUSTED:
                return refusedBeforeAcceptance ? EngineException.sentRetryable(ErrorCode.ERROR_CODE_OVERLOADED, msg, t)
                    : EngineException.sentFinal(ErrorCode.ERROR_CODE_OVERLOADED, msg, t);
            case CANCELLED:
                // our own cancels never get here (GrpcCalls): this is the engine dropping the call, as one shutting
                // down in a rolling deploy does; another endpoint can take a prefill, not a decode that may have pulled
                return leg == Leg.PREFILL
                    ? EngineException.sentRetryable(ErrorCode.ERROR_CODE_CANCELLED, msg + " (by the engine)", t)
                    : EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED, msg + " (by the engine)", t);
            case DEADLINE_EXCEEDED:
                return leg == Leg.PREFILL
                    ? EngineException.sentRetryable(ErrorCode.ERROR_CODE_CANCELLED, msg + " (leg deadline)", t)
                    : EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED, msg + " (leg deadline)", t);
            case UNAVAILABLE:
                return leg == Leg.PREFILL ? EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL, msg, t)
                    : EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, msg, t);
            default:
                return EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, msg, t);
        }
    }

    /** A refused TCP connection: nothing reached the engine. */
    private static boolean neverConnected(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ConnectException) {
                return true;
            }
        }
        return false;
    }
}
