package io.handoff.connector.spi;

import io.handoff.openengine.v1.ErrorCode;

import java.util.List;

/**
 * A leg failed, or was refused before anything was sent. The code and the retryable flag are those of the
 * OpenEngine {@code EngineError} the gateway reports: {@code retryable} is true only when the unchanged request can
 * succeed on retry.
 */
public class EngineException extends RuntimeException {

    private final ErrorCode code;
    private final boolean retryable;
    private final boolean sentToEngine;
    private final List<HeldKv> held;

    public EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message) {
        this(code, retryable, sentToEngine, message, null);
    }

    public EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message, Throwable cause) {
        this(code, retryable, sentToEngine, message, cause, List.of());
    }

    public EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message, Throwable cause,
            List<HeldKv> held) {
        super(message, cause);
        this.code = code;
        this.retryable = retryable;
        this.sentToEngine = sentToEngine;
        this.held = List.copyOf(held);
    }

    /** The same failure, also reporting KV an engine still holds despite it (e.g. P parked, then the leg broke). */
    public EngineException withHeld(List<HeldKv> stillHeld) {
        return new EngineException(code, retryable, sentToEngine, getMessage(), getCause(), stillHeld);
    }

    /** Refused before anything reached an engine: a field or style the connector cannot carry losslessly. */
    public static EngineException unsupported(String message) {
        return new EngineException(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, false, false, message);
    }

    public static EngineException invalid(String message) {
        return new EngineException(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false, false, message);
    }

    public ErrorCode code() {
        return code;
    }

    public boolean retryable() {
        return retryable;
    }

    /** What engines still hold after this failure; the gateway records each as a cleanup obligation. */
    public List<HeldKv> held() {
        return held;
    }

    /** Whether any byte of the leg reached the engine; false means nothing there needs cleaning up. */
    public boolean sentToEngine() {
        return sentToEngine;
    }
}
