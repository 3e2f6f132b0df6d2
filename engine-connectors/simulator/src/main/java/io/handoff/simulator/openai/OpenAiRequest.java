package io.handoff.simulator.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Reject;
import io.handoff.simulator.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * The parts of an OpenAI-style completion or chat request that the simulated model reads. Prompts are tokenized with
 * {@link Tokenizer}; chat messages are rendered as {@code <|role|> content} words followed by {@code <|assistant|>}.
 * One prompt per request: batches are rejected (a simplification; see the README).
 */
public final class OpenAiRequest {
    /** Which endpoint the request came to. */
    public enum Kind {
        COMPLETION,
        CHAT
    }

    public final Kind kind;
    public final ObjectNode body;
    public final String model;
    public final int[] promptIds;
    public final boolean promptAsTokens;
    public final int maxTokens;
    public final boolean maxTokensGiven;
    public final int minTokens;
    public final List<String> stop;
    public final boolean ignoreEos;
    public final int n;
    public final boolean stream;
    public final boolean streamOptionsGiven;
    public final boolean includeUsage;
    public final boolean continuousUsage;
    public final boolean returnTokenIds;

    private OpenAiRequest(Kind kind, ObjectNode body, int[] promptIds, boolean promptAsTokens, int defaultMaxTokens) {
        this.kind = kind;
        this.body = body;
        this.model = body.path("model").asText(null);
        this.promptIds = promptIds;
        this.promptAsTokens = promptAsTokens;
        JsonNode mt = body.get("max_completion_tokens");
        if (mt == null || mt.isNull()) {
            mt = body.get("max_tokens");
        }
        this.maxTokensGiven = mt != null && !mt.isNull();
        this.maxTokens = maxTokensGiven ? mt.asInt() : defaultMaxTokens;
        JsonNode minT = body.get("min_tokens");
        this.minTokens = minT == null || minT.isNull() ? 0 : minT.asInt();
        this.stop = stops(body.get("stop"));
        this.ignoreEos = body.path("ignore_eos").asBoolean(false);
        this.n = body.path("n").asInt(1);
        this.stream = body.path("stream").asBoolean(false);
        JsonNode so = body.get("stream_options");
        this.streamOptionsGiven = so != null && !so.isNull();
        this.includeUsage = streamOptionsGiven && so.path("include_usage").asBoolean(true);
        this.continuousUsage = streamOptionsGiven && so.path("continuous_usage_stats").asBoolean(false);
        this.returnTokenIds = body.path("return_token_ids").asBoolean(false);
        if (maxTokensGiven && maxTokens < 0) {
            throw Reject.badRequest("max_tokens must be at least 0, got " + maxTokens);
        }
    }

    /**
     * Parses a request; {@code chatDefaultMaxTokens} is used when a chat request gives no limit (engines default to
     * the remaining context), {@code completionDefaultMaxTokens} for completions.
     */
    public static OpenAiRequest parse(Kind kind, ObjectNode body, int completionDefaultMaxTokens,
        int chatDefaultMaxTokens) {
        if (kind == Kind.COMPLETION) {
            JsonNode p = body.get("prompt");
            if (p == null || p.isNull()) {
                throw Reject.badRequest("prompt is required");
            }
            boolean asTokens = p.isArray() && p.size() > 0 && p.get(0).isNumber();
            return new OpenAiRequest(kind, body, promptIds(p), asTokens, completionDefaultMaxTokens);
        }
        JsonNode msgs = body.get("messages");
        if (msgs == null || !msgs.isArray() || msgs.isEmpty()) {
            throw Reject.badRequest("messages is required");
        }
        return new OpenAiRequest(kind, body, Tokenizer.encode(renderChat(msgs)), false, chatDefaultMaxTokens);
    }

    /** Token ids of a completions prompt: a string, a list of ids, or a one-element list of either. */
    public static int[] promptIds(JsonNode p) {
        if (p.isTextual()) {
            return Tokenizer.encode(p.asText());
        }
        if (p.isArray()) {
            if (p.isEmpty()) {
                throw Reject.badRequest("prompt must not be empty");
            }
            if (p.get(0).isNumber()) {
                int[] ids = new int[p.size()];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = p.get(i).asInt();
                    if (ids[i] < 0) {
                        throw Reject.badRequest("token ids must be >= 0");
                    }
                }
                return ids;
            }
            if (p.size() == 1) {
                return promptIds(p.get(0));
            }
            throw Reject.badRequest("the simulator takes one prompt per request (batches are not simulated)");
        }
        throw Reject.badRequest("prompt must be a string or a list of token ids");
    }

    /** The deterministic chat template. */
    public static String renderChat(JsonNode messages) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode m : messages) {
            sb.append("<|").append(m.path("role").asText("user")).append("|> ");
            JsonNode c = m.get("content");
            if (c != null && c.isTextual()) {
                sb.append(c.asText());
            } else if (c != null && c.isArray()) {
                for (JsonNode part : c) {
                    if (part.has("text")) {
                        sb.append(part.get("text").asText()).append(' ');
                    }
                }
            }
            sb.append(' ');
        }
        sb.append("<|assistant|>");
        return sb.toString();
    }

    private static List<String> stops(JsonNode s) {
        List<String> out = new ArrayList<>();
        if (s == null || s.isNull()) {
            return out;
        }
        if (s.isTextual()) {
            out.add(s.asText());
        } else if (s.isArray()) {
            s.forEach(x -> out.add(x.asText()));
        }
        return out;
    }
}
