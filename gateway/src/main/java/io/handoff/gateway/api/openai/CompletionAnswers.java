package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;
import io.vertx.core.buffer.Buffer;

import java.util.List;

/**
 * Generate events as OpenAI {@code text_completion} objects: one chunk per TokenOutput and per GenerationFinished
 * when streaming (the usage chunk, with empty choices, when {@code stream_options.include_usage} asks for it), or
 * one body with every choice's text when not.
 */
final class CompletionAnswers extends Answers {

    private static final String OBJECT = "text_completion";

    CompletionAnswers(String id, long created, String model, boolean logprobs) {
        super(id, created, model, logprobs, OBJECT);
    }

    @Override
    void frames(GenerateResponse event, boolean includeUsage, Buffer out) {
        if (event.hasToken()) {
            TokenOutput token = event.getToken();
            chunk(out, json -> {
                json.writeNumberField("index", token.getOutputIndex());
                json.writeStringField("text", token.getText());
                logprobsField(json, token.getTokensList());
                json.writeNullField("finish_reason");
            });
        } else if (event.hasFinished()) {
            GenerationFinished finished = event.getFinished();
            chunk(out, json -> {
                json.writeNumberField("index", finished.getOutputIndex());
                json.writeStringField("text", "");
                json.writeNullField("logprobs");
                json.writeStringField("finish_reason", finishReason(finished));
            });
        }
        if (event.hasUsage() && includeUsage) {
            usageChunk(out, event.getUsage());
        }
    }

    @Override
    ObjectNode body(List<GenerateResponse> events, int outputs) {
        StringBuilder[] texts = new StringBuilder[outputs];
        ArrayNode[] tokens = new ArrayNode[outputs];
        String[] reasons = new String[outputs];
        Usage usage = Usage.getDefaultInstance();
        for (int i = 0; i < outputs; i++) {
            texts[i] = new StringBuilder();
            tokens[i] = OpenAiJson.mapper().createArrayNode();
        }
        for (GenerateResponse e : events) {
            if (e.hasToken() && e.getToken().getOutputIndex() < outputs) {
                texts[e.getToken().getOutputIndex()].append(e.getToken().getText());
                e.getToken().getTokensList().forEach(t -> tokens[e.getToken().getOutputIndex()].add(t.getLogprob()));
            }
            if (e.hasFinished() && e.getFinished().getOutputIndex() < outputs) {
                reasons[e.getFinished().getOutputIndex()] = finishReason(e.getFinished());
            }
            if (e.hasUsage()) {
                usage = e.getUsage();
            }
        }
        ObjectNode body = object();
        ArrayNode choices = body.putArray("choices");
        for (int i = 0; i < outputs; i++) {
            ObjectNode choice = choice(i, texts[i].toString());
            if (logprobs) {
                choice.set("logprobs", OpenAiJson.object().set("token_logprobs", tokens[i]));
            } else {
                choice.putNull("logprobs");
            }
            choice.put("finish_reason", reasons[i]);
            choices.add(choice);
        }
        body.set("usage", usage(usage));
        return body;
    }

    private ObjectNode object() {
        return object(OBJECT);
    }

    private static ObjectNode choice(int index, String text) {
        ObjectNode c = OpenAiJson.object();
        c.put("index", index);
        c.put("text", text);
        return c;
    }

    @Override
    ObjectNode logprobs(List<TokenInfo> tokens) {
        ObjectNode lp = OpenAiJson.object();
        ArrayNode names = lp.putArray("tokens");
        ArrayNode values = lp.putArray("token_logprobs");
        ArrayNode top = lp.putArray("top_logprobs");
        for (TokenInfo t : tokens) {
            names.add(t.getToken());
            values.add(t.getLogprob());
            ObjectNode candidates = OpenAiJson.object();
            t.getCandidatesList().forEach(c -> candidates.put(c.getToken(), c.getLogprob()));
            top.add(candidates);
        }
        return lp;
    }
}
