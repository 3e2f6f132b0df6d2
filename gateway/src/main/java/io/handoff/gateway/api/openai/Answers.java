package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.Usage;
import io.vertx.core.buffer.Buffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
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
    /**
     * {@code "id":…,"object":…,"created":…,"model":…,} with its trailing comma: the same in every chunk of the stream,
     * so written once.
     */
    private final byte[] sharedFields;
    /** The stream's chunks are written one after another, each a root value, by one generator into these bytes. */
    private final ByteArrayBuilder chunkBytes = new ByteArrayBuilder(256);
    private JsonGenerator chunkJson;

    /**
     * @param chunkObject the {@code object} every streamed chunk of this endpoint names
     */
    Answers(String id, long created, String model, boolean logprobs, String chunkObject) {
        this.id = id;
        this.created = created;
        this.model = model;
        this.logprobs = logprobs;
        this.sharedFields = sharedFields(chunkObject);
    }

    /**
     * Appends the event-stream frames one event becomes when streaming (none for events OpenAI has no chunk for).
     * The chunks are written field by field straight to UTF-8, not built as trees: this runs for every token.
     */
    abstract void frames(GenerateResponse event, boolean includeUsage, Buffer out);

    /** The whole answer of a non-streaming request. */
    abstract ObjectNode body(List<GenerateResponse> events, int outputs);

    /** The logprobs object of one choice, in this endpoint's own shape (completions and chat differ). */
    abstract ObjectNode logprobs(List<TokenInfo> tokens);

    /** A chunk's logprobs field: the object when the request asked for logprobs, null when it did not. */
    protected final void logprobsField(JsonGenerator json, List<TokenInfo> tokens) throws IOException {
        json.writeFieldName("logprobs");
        if (logprobs) {
            json.writeTree(logprobs(tokens));
        } else {
            json.writeNull();
        }
    }

    /** The fields every object of the answer starts with. */
    protected ObjectNode object(String object) {
        ObjectNode o = OpenAiJson.object();
        o.put("id", id);
        o.put("object", object);
        o.put("created", created);
        o.put("model", model);
        return o;
    }

    /** The body of one choice, written inside its object. */
    @FunctionalInterface
    interface ChoiceFields {
        void write(JsonGenerator json) throws IOException;
    }

    /** One chunk with a single choice. */
    protected final void chunk(Buffer out, ChoiceFields choice) {
        frame(out, json -> {
            json.writeArrayFieldStart("choices");
            json.writeStartObject();
            choice.write(json);
            json.writeEndObject();
            json.writeEndArray();
        });
    }

    /** The usage chunk: empty choices, then the usage. */
    protected final void usageChunk(Buffer out, Usage usage) {
        frame(out, json -> {
            json.writeArrayFieldStart("choices");
            json.writeEndArray();
            json.writeObjectFieldStart("usage");
            json.writeNumberField("prompt_tokens", usage.getPromptTokens());
            json.writeNumberField("completion_tokens", usage.getCompletionTokens());
            json.writeNumberField("total_tokens", usage.getTotalTokens());
            json.writeEndObject();
        });
    }

    /**
     * The fields every chunk starts with, then {@code rest}, as one frame. The shared fields go out as the bytes made
     * once, straight after the opening brace; the generator has written no field of this object yet, so it puts no
     * comma before the first of {@code rest}, and the shared bytes end with one.
     */
    private void frame(Buffer out, ChoiceFields rest) {
        try {
            JsonGenerator json = chunkJson();
            json.writeStartObject();
            json.flush();
            chunkBytes.write(sharedFields);
            rest.write(json);
            json.writeEndObject();
            json.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a chunk", e);
        }
        SseFrames.append(out, chunkBytes.toByteArray());
        chunkBytes.reset();
    }

    private JsonGenerator chunkJson() throws IOException {
        if (chunkJson == null) {
            chunkJson = OpenAiJson.mapper().getFactory().createGenerator(chunkBytes);
            chunkJson.setRootValueSeparator(null);
        }
        return chunkJson;
    }

    private byte[] sharedFields(String chunkObject) {
        ByteArrayBuilder bytes = new ByteArrayBuilder(128);
        try (JsonGenerator json = OpenAiJson.mapper().getFactory().createGenerator(bytes)) {
            json.writeStartObject();
            json.writeStringField("id", id);
            json.writeStringField("object", chunkObject);
            json.writeNumberField("created", created);
            json.writeStringField("model", model);
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a chunk's fields", e);
        }
        byte[] object = bytes.toByteArray(); // {...}: the braces dropped, a comma after the last field
        byte[] fields = Arrays.copyOfRange(object, 1, object.length);
        fields[fields.length - 1] = ',';
        return fields;
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
