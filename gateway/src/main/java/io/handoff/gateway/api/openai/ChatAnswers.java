package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.LogProb;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.Usage;

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

    /** Choices whose role chunk went out. */
    private final Set<Integer> opened = new HashSet<>();

    ChatAnswers(String id, long created, String model, boolean logprobs) {
        super(id, created, model, logprobs);
    }

    @Override
    List<ObjectNode> chunks(GenerateResponse event, boolean includeUsage) {
        List<ObjectNode> out = new ArrayList<>();
        if (event.hasToken()) {
            int index = event.getToken().getOutputIndex();
            open(index, out);
            ObjectNode choice = choice(index);
            choice.putObject("delta").put("content", event.getToken().getText());
            choice.set("logprobs", logprobs ? logprobs(event.getToken().getTokensList())
                    : OpenAiJson.mapper().nullNode());
            choice.putNull("finish_reason");
            out.add(chunk(choice));
        } else if (event.hasFinished()) {
            int index = event.getFinished().getOutputIndex();
            open(index, out);
            ObjectNode choice = choice(index);
            choice.putObject("delta");
            choice.putNull("logprobs");
            choice.put("finish_reason", finishReason(event.getFinished()));
            out.add(chunk(choice));
        }
        if (event.hasUsage() && includeUsage) {
            ObjectNode usage = object("chat.completion.chunk");
            usage.set("choices", OpenAiJson.mapper().createArrayNode());
            usage.set("usage", usage(event.getUsage()));
            out.add(usage);
        }
        return out;
    }

    /** The role chunk of a choice, before its first content. */
    private void open(int index, List<ObjectNode> out) {
        if (opened.add(index)) {
            ObjectNode choice = choice(index);
            choice.putObject("delta").put("role", "assistant").put("content", "");
            choice.putNull("logprobs");
            choice.putNull("finish_reason");
            out.add(chunk(choice));
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

    private ObjectNode chunk(ObjectNode choice) {
        ObjectNode chunk = object("chat.completion.chunk");
        chunk.putArray("choices").add(choice);
        return chunk;
    }

    private static ObjectNode choice(int index) {
        return OpenAiJson.object().put("index", index);
    }

    /** Chat logprobs: {@code {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}}. */
    private static ObjectNode logprobs(List<TokenInfo> tokens) {
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
