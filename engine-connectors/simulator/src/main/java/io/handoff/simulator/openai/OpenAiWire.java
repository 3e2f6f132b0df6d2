package io.handoff.simulator.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Generation;
import io.handoff.simulator.Http;
import java.util.ArrayList;
import java.util.List;

/** Renders OpenAI-style responses and SSE chunks from a {@link Generation}. */
public final class OpenAiWire {
    /** The small differences between engines' OpenAI layers. */
    public static final class Style {
        /** TensorRT-LLM dumps chunks with nulls present ({@code usage: null}, {@code token_ids}, ...). */
        public boolean nullsInChunks;
        /** vLLM and TensorRT-LLM have {@code stop_reason}; SGLang has {@code matched_stop}. */
        public boolean matchedStop;
    }

    private final Style style;

    public OpenAiWire(Style style) {
        this.style = style;
    }

    public static ObjectNode usage(int prompt, int completion, Integer cachedTokens) {
        ObjectNode u = Http.obj();
        u.put("prompt_tokens", prompt);
        u.put("total_tokens", prompt + completion);
        u.put("completion_tokens", completion);
        if (cachedTokens == null) {
            u.putNull("prompt_tokens_details");
        } else {
            u.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        }
        return u;
    }

    /** A complete non-streaming response with one choice. */
    public ObjectNode response(OpenAiRequest req, String id, long created, String model, Generation g,
        int promptTokens, ObjectNode usage) {
        ObjectNode o = Http.obj();
        o.put("id", id);
        boolean chat = req.kind == OpenAiRequest.Kind.CHAT;
        o.put("object", chat ? "chat.completion" : "text_completion");
        o.put("created", created);
        o.put("model", model);
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        if (chat) {
            ObjectNode m = c.putObject("message");
            m.put("role", "assistant");
            m.put("content", g.text());
            m.putArray("tool_calls");
        } else {
            c.put("text", g.text());
        }
        c.putNull("logprobs");
        c.put("finish_reason", g.finishReason());
        stopField(c, g);
        if (req.returnTokenIds) {
            putIds(c.putArray("token_ids"), g.ids());
            if (!chat) {
                putIds(c.putArray("prompt_token_ids"), req.promptIds);
            } else {
                putIds(o.putArray("prompt_token_ids"), req.promptIds);
            }
        }
        o.set("usage", usage);
        return o;
    }

    /**
     * The index of the first event of {@link #streamEvents} that carries a token: a chat stream opens with a role-only
     * event. Past the end when the generation has none.
     */
    public static int firstTokenEvent(OpenAiRequest req, Generation g) {
        return g.size() == 0 ? Integer.MAX_VALUE : req.kind == OpenAiRequest.Kind.CHAT ? 1 : 0;
    }

    /** SSE payloads (without {@code data: }) for one streamed choice, then the usage chunk if asked for. */
    public List<String> streamEvents(OpenAiRequest req, String id, long created, String model, Generation g,
        ObjectNode usage) {
        List<String> out = new ArrayList<>();
        boolean chat = req.kind == OpenAiRequest.Kind.CHAT;
        if (chat) {
            ObjectNode first = chunk(req, id, created, model);
            ObjectNode c = choice(first);
            c.putObject("delta").put("role", "assistant").put("content", "");
            c.putNull("logprobs");
            c.putNull("finish_reason");
            if (req.returnTokenIds) {
                putIds(first.putArray("prompt_token_ids"), req.promptIds);
            }
            out.add(Http.write(first));
        }
        int n = g.size();
        for (int i = 0; i < n; i++) {
            boolean last = i == n - 1;
            ObjectNode ch = chunk(req, id, created, model);
            ObjectNode c = choice(ch);
            if (chat) {
                c.putObject("delta").put("content", g.delta(i));
            } else {
                c.put("text", g.delta(i));
            }
            c.putNull("logprobs");
            if (last) {
                c.put("finish_reason", g.finishReason());
                stopField(c, g);
            } else {
                c.putNull("finish_reason");
                if (!style.matchedStop) {
                    c.putNull("stop_reason");
                }
            }
            if (req.returnTokenIds || style.nullsInChunks) {
                putIds(c.putArray("token_ids"), new int[] {g.id(i)});
            }
            if (!chat && i == 0 && req.returnTokenIds) {
                putIds(c.putArray("prompt_token_ids"), req.promptIds);
            }
            if (req.continuousUsage) {
                ch.set("usage", usage(usage.path("prompt_tokens").asInt(), i + 1, null));
            }
            out.add(Http.write(ch));
        }
        if (n == 0) {
            ObjectNode ch = chunk(req, id, created, model);
            ObjectNode c = choice(ch);
            if (chat) {
                c.putObject("delta").put("content", "");
            } else {
                c.put("text", "");
            }
            c.put("finish_reason", g.finishReason());
            out.add(Http.write(ch));
        }
        if (req.includeUsage) {
            ObjectNode u = chunk(req, id, created, model);
            u.putArray("choices");
            u.set("usage", usage);
            out.add(Http.write(u));
        }
        return out;
    }

    private ObjectNode chunk(OpenAiRequest req, String id, long created, String model) {
        ObjectNode o = Http.obj();
        o.put("id", id);
        o.put("object", req.kind == OpenAiRequest.Kind.CHAT ? "chat.completion.chunk" : "text_completion");
        o.put("created", created);
        o.put("model", model);
        if (style.nullsInChunks) {
            o.putNull("usage");
        }
        return o;
    }

    private static ObjectNode choice(ObjectNode chunk) {
        ObjectNode c = chunk.putArray("choices").addObject();
        c.put("index", 0);
        return c;
    }

    private void stopField(ObjectNode c, Generation g) {
        Object r = g.stopReason();
        String field = style.matchedStop ? "matched_stop" : "stop_reason";
        if (r == null) {
            c.putNull(field);
        } else {
            c.put(field, r.toString());
        }
    }

    private static void putIds(ArrayNode a, int[] ids) {
        for (int id : ids) {
            a.add(id);
        }
    }
}
