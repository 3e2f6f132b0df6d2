package io.handoff.gateway.orchestration;

import io.handoff.openengine.v1.ErrorCode;

/**
 * A Generate refused before acceptance. It is reported as a non-OK gRPC status (or HTTP error) with no response
 * event, and it guarantees that nothing was allocated and no engine was contacted.
 */
public final class GenerateRefusal extends RuntimeException {

    private final ErrorCode code;
    private final boolean retryable;

    public GenerateRefusal(ErrorCode code, boolean retryable, String message) {
        super(message, null, false, false);
        this.code = code;
        this.retryable = retryable;
    }

    public static GenerateRefusal invalid(String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false, message);
    }

    public static GenerateRefusal unsupported(String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, false, message);
    }

    public static GenerateRefusal overloaded(String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_OVERLOADED, true, message);
    }

    public ErrorCode code() {
        return code;
    }

    public boolean retryable() {
        return retryable;
    }
}
