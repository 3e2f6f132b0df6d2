package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.http.HttpFailures;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;

/**
 * SGLang's completion chunks in the shape the shared completion mapper reads. SGLang names the matched stop
 * {@code matched_stop} (a token id or a string) where vLLM says {@code stop_reason}; and where a scheduler abort
 * reaches an answer in SGLang's native form ({@code finish_reason: {"type":"abort","status_code":500,...}}) inside
 * an HTTP 200, the leg fails with the error that status stands for.
 */
final class SglangChunks {

    private SglangChunks() {
    }

    static JsonNode normalize(JsonNode chunk, String what) {
        if (!chunk.path("choices").isArray()) {
            return chunk;
        }
        ObjectNode copy = ((ObjectNode) chunk).deepCopy();
        for (JsonNode c : copy.get("choices")) {
            if (!(c instanceof ObjectNode choice)) {
                continue;
            }
            JsonNode finish = choice.get("finish_reason");
            if (finish != null && finish.isObject()) {
                String type = finish.path("type").asText("");
                if ("abort".equals(type) && finish.has("status_code")) {
                    throw abort(finish, what);
                }
                if (finish.has("matched") && !choice.hasNonNull("matched_stop")) {
                    choice.set("matched_stop", finish.get("matched"));
                }
                choice.put("finish_reason", type);
            }
            JsonNode matched = choice.get("matched_stop");
            if (matched != null && !matched.isNull() && !choice.hasNonNull("stop_reason")) {
                choice.set("stop_reason", matched);
            }
        }
        return copy;
    }

    /** An abort finish with a status: the engine failed the leg after accepting it, so it is never retryable. */
    static EngineException abort(JsonNode finish, String what) {
        int status = finish.path("status_code").asInt(500);
        EngineException byStatus = HttpFailures.fromStatus(status < 400 || status > 599 ? 500 : status,
                Json.write(finish), what + " (abort inside a 200 answer)");
        return EngineException.sentFinal(byStatus.code(), byStatus.getMessage());
    }
}
