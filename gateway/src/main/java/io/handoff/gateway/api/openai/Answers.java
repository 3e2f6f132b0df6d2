package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.Usage;

import java.util.List;

/**
 * Generate events as the OpenAI objects of one endpoint: the chunks each event becomes when streaming, or the whole
 * body when not. One instance per request: a chat answer remembers which choices have had their role chunk.
 */
abstract class Answers {

    protected final String id;
    protected final long created;
    protected final String model;
    protected final boolean logprobs;

    Answers(String id, long created, String model, boolean logprobs) {
        this.id = id;
        this.created = created;
        this.model = model;
        this.logprobs = logprobs;
    }

    /** The chunks one event becomes when streaming; empty for events OpenAI has no chunk for. */
    abstract List<ObjectNode> chunks(GenerateResponse event, boolean includeUsage);

    /** The whole answer of a non-streaming request. */
    abstract ObjectNode body(List<GenerateResponse> events, int outputs);

    /** The fields every object of the answer starts with. */
    protected ObjectNode object(String object) {
        ObjectNode o = OpenAiJson.object();
        o.put("id", id);
        o.put("object", object);
        o.put("created", created);
        o.put("model", model);
        return o;
    }

    static ObjectNode usage(Usage usage) {
        return OpenAiJson.object().put("prompt_tokens", usage.getPromptTokens())
                .put("completion_tokens", usage.getCompletionTokens()).put("total_tokens", usage.getTotalTokens());
    }

    /** OpenAI's finish_reason; a reason openengine.v1 has no value for keeps the engine's word (its message). */
    static String finishReason(GenerationFinished finished) {
        return switch (finished.getReason()) {
            case FINISH_REASON_STOP -> "stop";
            case FINISH_REASON_LENGTH -> "length";
            case FINISH_REASON_CANCELLED -> "abort";
            default -> finished.getMessage().isEmpty() ? null : finished.getMessage();
        };
    }
}
