package io.handoff.connector.openai.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;

import java.net.ConnectException;
import java.util.concurrent.TimeoutException;

/**
 * Turns what went wrong on an HTTP exchange with an engine into an {@link EngineException}. The retryable flag is
 * true only where resending the unchanged request can succeed (the engine was busy, a proxy in between failed, the
 * engine was not reachable); the sent-to-engine flag is false only when no connection was made, so the gateway knows
 * whether cleanup may be owed.
 */
public final class HttpFailures {

    private HttpFailures() {
    }

    /** The engine answered with a non-2xx status; {@code body} is what it said. */
    public static EngineException fromStatus(int status, String body, String what) {
        String message = what + ": HTTP " + status + " " + engineMessage(body);
        if (status == 404) {
            // OpenAI-compatible servers answer 404 for a model they do not serve
            return EngineException.sentFinal(ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, message);
        }
        if (status == 408 || status == 429 || status == 503) {
            return EngineException.sentRetryable(ErrorCode.ERROR_CODE_OVERLOADED, message);
        }
        if (status >= 400 && status < 500) {
            return EngineException.sentFinal(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, message);
        }
        // 502 and 504 come from something between us and the engine; the engine itself may be fine
        return status == 502 || status == 504 ? EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL, message)
                : EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, message);
    }

    /**
     * The exchange failed below HTTP. {@code sent} says whether a connection was made (and so bytes may have reached
     * the engine); {@code answered} whether the engine had started answering (then nothing can be resent unchanged).
     */
    public static EngineException fromTransport(Throwable failure, boolean sent, boolean answered, String what) {
        if (failure instanceof EngineException e) {
            return e;
        }
        // the transport's own text names socket addresses: it stays in the cause, for the log and the trace
        if (!sent) {
            // a request is answered only once it was sent, so nothing unsent can have been acted on
            String why = failure instanceof TimeoutException ? "timed out"
                    : failure instanceof ConnectException ? "connection refused" : "could not connect";
            return EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL, what + ": " + why, failure);
        }
        String message = failure instanceof TimeoutException ? what + ": timed out"
                : what + ": connection failed (" + failure.getClass().getSimpleName() + ")";
        return answered ? EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, message, failure)
                : EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL, message, failure);
    }

    /** The engine answered something that is not the JSON the API promises: the request reached it and failed. */
    public static EngineException badAnswer(String what, Throwable parseFailure) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
                what + ": the engine's answer is not valid JSON", parseFailure);
    }

    /** The stream ended without its end marker: the engine or the network cut it. */
    public static EngineException streamCut(String what) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL, what + ": the stream ended before [DONE]");
    }

    /** An error event inside a stream ({@code data: {"error": {...}}}); its code is an HTTP status when numeric. */
    public static EngineException streamError(JsonNode error, String what) {
        int status = error.path("code").canConvertToInt() ? error.path("code").asInt() : 500;
        if (status < 400 || status > 599) {
            status = 500;
        }
        EngineException byStatus = fromStatus(status, Json.write(error), what + " (stream error event)");
        // the engine accepted the request and then failed it: never resend the same stream unchanged
        return EngineException.sentFinal(byStatus.code(), byStatus.getMessage());
    }

    /** The human part of an OpenAI-style error body ({@code {"error":{"message":...}}} or FastAPI's detail). */
    static String engineMessage(String body) {
        if (body == null || body.isBlank()) {
            return "(empty body)";
        }
        try {
            JsonNode node = Json.parse(body);
            for (JsonNode candidate : new JsonNode[] {node.path("error").path("message"), node.path("message"),
                node.path("detail")}) {
                if (candidate.isTextual()) {
                    return candidate.asText();
                }
            }
        } catch (IllegalArgumentException notJson) {
            // fall through: show the raw text
        }
        return Json.abbreviate(body);
    }
}
