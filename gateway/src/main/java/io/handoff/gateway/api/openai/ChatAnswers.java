package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.LogProb;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;
import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Generate events as OpenAI {@code chat.completion} objects. Streaming, as the engines stream a chat: each choice
 * opens with a chunk whose delta is {@code {"role":"assistant","content":""}}; then one chunk per TokenOutput with
 * {@code delta.content}; then one per GenerationFinished with an empty delta and the finish_reason; then, when
 * {@code stream_options.include_usage} asks for it, the usage chunk with empty choices. Not streaming: one
 * {@code chat.completion} with each choice's {@code message}.
 */
final class ChatAnswers extends Answers {

    private static final String CHUNK = "chat.completion.chunk";

    /** Choices whose role chunk went out. */
    private final Set<Integer> opened = new HashSet<>();

    ChatAnswers(String id, long created, String model, boolean logprobs) {
        super(id, created, model, logprobs, CHUNK);
    }

    @Override
    void frames(GenerateResponse event, boolean includeUsage, Buffer out) {
        if (event.hasToken()) {
            TokenOutput token = event.getToken();
            open(token.getOutputIndex(), out);
            chunk(out, json -> {
                json.writeNumberField("index", token.getOutputIndex());
                json.writeObjectFieldStart("delta");
                json.writeStringField("content", token.getText());
                json.writeEndObject();
                logprobsField(json, token.getTokensList());
                json.writeNullField("finish_reason");
            });
        } else if (event.hasFinished()) {
            GenerationFinished finished = event.getFinished();
            open(finished.getOutputIndex(), out);
            chunk(out, json -> {
                json.writeNumberField("index", finished.getOutputIndex());
                json.writeObjectFieldStart("delta");
                json.writeEndObject();
                json.writeNullField("logprobs");
                json.writeStringField("finish_reason", finishReason(finished));
            });
        }
        if (event.hasUsage() && includeUsage) {
            usageChunk(out, event.getUsage());
        }
    }

    /** The role chunk of a choice, before its first content. */
    private void open(int index, Buffer out) {
        if (opened.add(index)) {
            chunk(out, json -> {
                json.writeNumberField("index", index);
                json.writeObjectFieldStart("delta");
                json.writeStringField("role", "assistant");
                json.writeStringField("content", "");
                json.writeEndObject();
                json.writeNullField("logprobs");
                json.writeNullField("finish_reason");
            });
        }
    }

    @Override
    ObjectNode body(List<GenerateResponse> events, int outputs) {
        StringBuilder[] texts = new StringBuilder[outputs];
        List<List<TokenInfo>> tokens = new ArrayList<>();
        String[] reasons = new String[outputs];
        Usage usage = Usage.getDefaultInstance();
        for (int i = 0; i < outputs; i++) {
            texts[i] = new StringBuilder();
            tokens.add(new ArrayList<>());
        }
        for (GenerateResponse e : events) {
            if (e.hasToken() && e.getToken().getOutputIndex() < outputs) {
                texts[e.getToken().getOutputIndex()].append(e.getToken().getText());
                tokens.get(e.getToken().getOutputIndex()).addAll(e.getToken().getTokensList());
            }
            if (e.hasFinished() && e.getFinished().getOutputIndex() < outputs) {
                reasons[e.getFinished().getOutputIndex()] = finishReason(e.getFinished());
            }
            if (e.hasUsage()) {
                usage = e.getUsage();
            }
        }
        ObjectNode body = object("chat.completion");
        ArrayNode choices = body.putArray("choices");
        for (int i = 0; i < outputs; i++) {
            ObjectNode choice = choice(i);
            choice.putObject("message").put("role", "assistant").put("content", texts[i].toString());
            choice.set("logprobs", logprobs ? logprobs(tokens.get(i)) : OpenAiJson.mapper().nullNode());
            choice.put("finish_reason", reasons[i]);
            choices.add(choice);
        }
        body.set("usage", usage(usage));
        return body;
    }

    private static ObjectNode choice(int index) {
        return OpenAiJson.object().put("index", index);
    }

    /** Chat logprobs: {@code {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}}. */
    @Override
    ObjectNode logprobs(List<TokenInfo> tokens) {
        ObjectNode lp = OpenAiJson.object();
        ArrayNode content = lp.putArray("content");
        for (TokenInfo t : tokens) {
            if (!t.hasLogprob()) {
                continue; // a token the engine sent without a logprob (its id only)
            }
            ObjectNode entry = content.addObject().put("token", t.getToken());
            entry.put("logprob", t.getLogprob());
            entry.set("bytes", bytes(t.getToken()));
            ArrayNode top = entry.putArray("top_logprobs");
            for (LogProb c : t.getCandidatesList()) {
                top.addObject().put("token", c.getToken()).put("logprob", c.getLogprob()).set("bytes",
                        bytes(c.getToken()));
            }
        }
        return lp;
    }

    private static ArrayNode bytes(String token) {
        ArrayNode out = OpenAiJson.mapper().createArrayNode();
        for (byte b : token.getBytes(StandardCharsets.UTF_8)) {
            out.add(b & 0xff);
        }
        return out;
    }
}
