package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.handoff.connector.openai.http.HttpFailures;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.openai.http.SseEvents;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One chunk of an OpenAI-compatible completion or chat stream, or one whole answer, holding only what
 * {@link CompletionEvents} makes events of. It is read in one pass of Jackson's streaming parser: a token's chunk is
 * a handful of fields, and building a tree of it (a map per object, every name hashed) cost the gateway more than
 * anything else it does per relayed token. The parts that are rare or shaped freely (logprobs, usage, a finish
 * reason given as an object, an error) are kept as trees; every other field is skipped unread.
 *
 * @param choices the choices in the order sent; empty when the chunk has none (or {@code choices} is no array)
 * @param usage the {@code usage} object, or null
 * @param error the {@code error} member whatever its value (JSON null included), or null when there is none
 * @param object the {@code object} member when it is a string, or null
 */
public record CompletionChunk(List<Choice> choices, JsonNode usage, JsonNode error, String object) {

    /**
     * Reads the payloads of an engine's event stream; an error event ({@code {"error":...}}, or an error object of its
     * own, {@code {"object":"error",...}} as trtllm-serve sends) fails the stream with what the engine said.
     */
    public static final SseEvents<CompletionChunk> EVENTS = (payload, what) -> {
        CompletionChunk chunk = read(payload);
        if (chunk.error() != null) {
            throw HttpFailures.streamError(chunk.error(), what);
        }
        if ("error".equals(chunk.object())) {
            throw HttpFailures.streamError(Json.parse(payload), what);
        }
        return chunk;
    };

    /**
     * One choice of a chunk.
     *
     * @param text the new text: {@code text}, else {@code delta.content}, else {@code message.content}; null if none
     *        is a string
     * @param tokenIds {@code token_ids}, or null when absent
     * @param logprobs the {@code logprobs} object (completions or chat shape), or null
     * @param finishReason {@code finish_reason} as sent (a string, or an object for engines that send one), or null
     *        when absent or JSON null
     * @param stopReason {@code stop_reason}, or null when absent or JSON null
     * @param matchedStop {@code matched_stop} (SGLang's name for the stop that matched), or null
     * @param toolCalls whether {@code delta.tool_calls} or {@code message.tool_calls} is a non-empty array
     */
    public record Choice(int index, String text, int[] tokenIds, JsonNode logprobs, JsonNode finishReason,
            JsonNode stopReason, JsonNode matchedStop, boolean toolCalls) {

        /** This choice finishing for {@code reason}, with the stop that matched. */
        public Choice withFinish(JsonNode reason, JsonNode stop) {
            return new Choice(index, text, tokenIds, logprobs, reason, stop, matchedStop, toolCalls);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Choice c && index == c.index && toolCalls == c.toolCalls
                    && Objects.equals(text, c.text) && Arrays.equals(tokenIds, c.tokenIds)
                    && Objects.equals(logprobs, c.logprobs)
                    && Objects.equals(finishReason, c.finishReason)
                    && Objects.equals(stopReason, c.stopReason)
                    && Objects.equals(matchedStop, c.matchedStop);
        }

        @Override
        public int hashCode() {
            return Objects.hash(index, text, Arrays.hashCode(tokenIds), finishReason);
        }

        @Override
        public String toString() {
            return "Choice[index=" + index + ", text=" + text + ", tokenIds=" + Arrays.toString(tokenIds)
                    + ", finishReason=" + finishReason + ", stopReason=" + stopReason + "]";
        }
    }

    /** The chunk of one event payload; anything but a JSON object is an {@link IllegalArgumentException}. */
    public static CompletionChunk read(byte[] utf8) {
        try (JsonParser p = Json.mapper().getFactory().createParser(utf8)) {
            return read(p);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + Json.abbreviate(
                    new String(utf8, StandardCharsets.UTF_8)), e);
        }
    }

    /** The chunk of an answer already parsed (a whole, non-streaming answer). */
    public static CompletionChunk of(JsonNode answer) {
        try (JsonParser p = Json.mapper().treeAsTokens(answer)) {
            return read(p);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a completion answer: " + Json.abbreviate(Json.write(answer)), e);
        }
    }

    private static CompletionChunk read(JsonParser p) throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new IllegalArgumentException("not a JSON object");
        }
        List<Choice> choices = List.of();
        JsonNode usage = null;
        JsonNode error = null;
        String object = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "choices" -> choices = value == JsonToken.START_ARRAY ? choices(p) : skip(p, List.of());
                case "usage" -> usage = value == JsonToken.START_OBJECT ? tree(p) : skip(p, null);
                case "error" -> error = tree(p);
                case "object" -> object = value == JsonToken.VALUE_STRING ? p.getText() : skip(p, null);
                default -> p.skipChildren();
            }
        }
        return new CompletionChunk(choices, usage, error, object);
    }

    private static List<Choice> choices(JsonParser p) throws IOException {
        List<Choice> choices = new ArrayList<>(1);
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t == JsonToken.START_OBJECT) {
                choices.add(choice(p));
            } else {
                p.skipChildren();
            }
        }
        return choices;
    }

    private static Choice choice(JsonParser p) throws IOException {
        int index = 0;
        String text = null;
        Message delta = Message.NONE;
        Message message = Message.NONE;
        int[] tokenIds = null;
        JsonNode logprobs = null;
        JsonNode finishReason = null;
        JsonNode stopReason = null;
        JsonNode matchedStop = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "index" -> index = value.isScalarValue() ? p.getValueAsInt(0) : skip(p, 0);
                case "text" -> text = value == JsonToken.VALUE_STRING ? p.getText() : skip(p, null);
                case "delta" -> delta = value == JsonToken.START_OBJECT ? message(p) : skip(p, Message.NONE);
                case "message" -> message = value == JsonToken.START_OBJECT ? message(p) : skip(p, Message.NONE);
                case "token_ids" -> tokenIds = value == JsonToken.START_ARRAY ? ints(p) : skip(p, null);
                case "logprobs" -> logprobs = value == JsonToken.START_OBJECT ? tree(p) : skip(p, null);
                case "finish_reason" -> finishReason = nonNullTree(p, value);
                case "stop_reason" -> stopReason = nonNullTree(p, value);
                case "matched_stop" -> matchedStop = nonNullTree(p, value);
                default -> p.skipChildren();
            }
        }
        String newText = text != null ? text : delta.content() != null ? delta.content() : message.content();
        return new Choice(index, newText, tokenIds, logprobs, finishReason, stopReason, matchedStop,
                delta.toolCalls() || message.toolCalls());
    }

    /** A chat {@code delta} or {@code message}: its text and whether it calls tools. */
    private record Message(String content, boolean toolCalls) {
        static final Message NONE = new Message(null, false);
    }

    private static Message message(JsonParser p) throws IOException {
        String content = null;
        boolean toolCalls = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            if ("content".equals(name) && value == JsonToken.VALUE_STRING) {
                content = p.getText();
            } else if ("tool_calls".equals(name) && value == JsonToken.START_ARRAY) {
                toolCalls = p.nextToken() != JsonToken.END_ARRAY;
                if (toolCalls) {
                    p.skipChildren();
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        p.skipChildren();
                    }
                }
            } else {
                p.skipChildren();
            }
        }
        return new Message(content, toolCalls);
    }

    /** An array of token ids; an element that is no number counts as id 0, as a lenient reader of the tree did. */
    private static int[] ints(JsonParser p) throws IOException {
        int[] ids = new int[8];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            long id = t.isScalarValue() ? p.getValueAsLong(0) : skip(p, 0L);
            if (n == ids.length) {
                ids = Arrays.copyOf(ids, n * 2);
            }
            ids[n++] = (int) id;
        }
        return Arrays.copyOf(ids, n);
    }

    private static JsonNode tree(JsonParser p) throws IOException {
        return Json.mapper().readTree(p);
    }

    /** A finish or stop reason: null for JSON null, a string without building a tree (the usual reason), else a tree. */
    private static JsonNode nonNullTree(JsonParser p, JsonToken value) throws IOException {
        return switch (value) {
            case VALUE_NULL -> null;
            case VALUE_STRING -> TextNode.valueOf(p.getText());
            default -> tree(p);
        };
    }

    /** Skips the current value and answers {@code instead}, for a member whose value is not of the expected type. */
    private static <T> T skip(JsonParser p, T instead) throws IOException {
        p.skipChildren();
        return instead;
    }
}
