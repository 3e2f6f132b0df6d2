package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.handoff.connector.openai.completion.CompletionChunk;
import io.handoff.connector.openai.http.HttpFailures;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;

import java.util.ArrayList;
import java.util.List;

/**
 * SGLang's completion chunks in the shape the shared completion mapper reads. SGLang names the matched stop
 * {@code matched_stop} (a token id or a string) where vLLM says {@code stop_reason}; and where a scheduler abort
 * reaches an answer in SGLang's native form ({@code finish_reason: {"type":"abort","status_code":500,...}}) inside
 * an HTTP 200, the leg fails with the error that status stands for.
 */
final class SglangChunks {

    private SglangChunks() {
    }

    static CompletionChunk normalize(CompletionChunk chunk, String what) {
        List<CompletionChunk.Choice> choices = null;
        for (int i = 0; i < chunk.choices().size(); i++) {
            CompletionChunk.Choice choice = chunk.choices().get(i);
            CompletionChunk.Choice normal = normalize(choice, what);
            if (normal != choice && choices == null) {
                choices = new ArrayList<>(chunk.choices());
            }
            if (choices != null) {
                choices.set(i, normal);
            }
        }
        return choices == null ? chunk
                : new CompletionChunk(List.copyOf(choices), chunk.usage(), chunk.error(), chunk.object());
    }

    /** The choice itself when it is already in the shared shape (every token's chunk is). */
    private static CompletionChunk.Choice normalize(CompletionChunk.Choice choice, String what) {
        JsonNode finish = choice.finishReason();
        JsonNode matched = choice.matchedStop();
        if (finish != null && finish.isObject()) {
            String type = finish.path("type").asText("");
            if ("abort".equals(type) && finish.has("status_code")) {
                throw abort(finish, what);
            }
            if (finish.has("matched") && matched == null) {
                matched = finish.get("matched");
            }
            finish = TextNode.valueOf(type);
        }
        JsonNode stop = choice.stopReason() == null && matched != null && !matched.isNull() ? matched
                : choice.stopReason();
        return finish == choice.finishReason() && stop == choice.stopReason() ? choice
                : choice.withFinish(finish, stop);
    }

    /** An abort finish with a status: the engine failed the leg after accepting it, so it is never retryable. */
    static EngineException abort(JsonNode finish, String what) {
        int status = finish.path("status_code").asInt(500);
        EngineException byStatus = HttpFailures.fromStatus(status < 400 || status > 599 ? 500 : status,
                Json.write(finish), what + " (abort inside a 200 answer)");
        return EngineException.sentFinal(byStatus.code(), byStatus.getMessage());
    }
}
