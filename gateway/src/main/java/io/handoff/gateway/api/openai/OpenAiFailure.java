package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.gateway.api.rest.OpenAiError;
import io.handoff.gateway.orchestration.GenerateRefusal;
import io.handoff.openengine.v1.ErrorCode;

/**
 * An HTTP error in OpenAI's shape: {@code {"error": {"message", "type", "param", "code"}}}. {@code code} is the
 * OpenEngine error code the gRPC side reports in its trailer, so clients of both APIs branch on the same names.
 */
final class OpenAiFailure extends RuntimeException {

    private final int status;
    private final String type;
    private final String param;
    private final String code;

    OpenAiFailure(int status, String type, String code, String param, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
    }

    static OpenAiFailure invalid(String param, String message) {
        return new OpenAiFailure(400, "invalid_request_error", ErrorCode.ERROR_CODE_INVALID_ARGUMENT.name(), param,
                message);
    }

    /**
     * The one mapping from an OpenEngine error code to an HTTP status. A failed KV transfer is the engines' failure,
     * not the gateway's: 502, as a proxy answers when what stands behind it failed.
     */
    static int statusOf(ErrorCode code) {
        return switch (code) {
            case ERROR_CODE_INVALID_ARGUMENT, ERROR_CODE_UNSUPPORTED_FEATURE, ERROR_CODE_ROLE_MISMATCH -> 400;
            case ERROR_CODE_MODEL_NOT_FOUND, ERROR_CODE_REQUEST_NOT_FOUND, ERROR_CODE_KV_SESSION_NOT_FOUND -> 404;
            case ERROR_CODE_DUPLICATE_REQUEST -> 409;
            case ERROR_CODE_OVERLOADED, ERROR_CODE_DRAINING -> 503;
            case ERROR_CODE_CANCELLED -> 499;
            case ERROR_CODE_KV_TRANSFER_FAILED -> 502;
            default -> 500;
        };
    }

    /** The one mapping from an HTTP status to the error body's {@code type}. */
    static String typeOf(int status) {
        return switch (status) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 429 -> "rate_limit_error";
            case 502 -> "engine_error";
            case 503 -> "service_unavailable_error";
            default -> status >= 500 ? "internal_error" : "invalid_request_error";
        };
    }

    /** An OpenEngine error the run ended with, as a whole answer's error. */
    static OpenAiFailure of(ErrorCode code, String message) {
        int status = statusOf(code);
        return new OpenAiFailure(status, typeOf(status), code.name(), null, message);
    }

    static OpenAiFailure of(GenerateRefusal refusal) {
        if (refusal.retryAfter().isPresent()) {
            return new OpenAiFailure(429, "rate_limit_error", refusal.code().name(), null, refusal.getMessage());
        }
        int status = refusal.unavailable() ? 503 : statusOf(refusal.code());
        return new OpenAiFailure(status, typeOf(status), refusal.code().name(), null, refusal.getMessage());
    }

    int status() {
        return status;
    }

    ObjectNode body() {
        return body(getMessage(), type, code, param);
    }

    /** The same error body the REST session API answers, so both HTTP APIs share one shape. */
    static ObjectNode body(String message, String type, String code, String param) {
        return OpenAiJson.mapper().valueToTree(new OpenAiError(new OpenAiError.Detail(message, type, code, param)));
    }
}
