package io.handoff.connector.spi;

import io.handoff.openengine.v1.ErrorCode;

/**
 * A leg failed, or was refused before anything was sent. The code and the retryable flag are those of the
 * OpenEngine {@code EngineError} the gateway reports: {@code retryable} is true only when the unchanged request can
 * succeed on retry.
 */
public class EngineException extends RuntimeException {

    private final ErrorCode code;
    private final boolean retryable;
    private final boolean sentToEngine;

    public EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message) {
        this(code, retryable, sentToEngine, message, null);
    }

    public EngineException(ErrorCode code, boolean retryable, boolean sentToEngine, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.retryable = retryable;
        this.sentToEngine = sentToEngine;
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

    /** Whether any byte of the leg reached the engine; false means nothing there needs cleaning up. */
    public boolean sentToEngine() {
        return sentToEngine;
    }
}
