package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.StopMatch;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Turns the chunks of one OpenAI-compatible completion or chat stream (or one complete answer) into openengine.v1
 * events with the upstream rules: a TokenOutput per choice delta, carrying {@code output_index} and only the new
 * text and tokens (engines stream deltas already); one GenerationFinished per output; Usage only on the last event.
 *
 * <p>Chat chunks carry their text in {@code choices[].delta.content} (a whole chat answer in
 * {@code choices[].message.content}); the first chunk, with only {@code delta.role}, is no event. An answer with
 * {@code tool_calls} fails the stream: events carry text only, and a tool call silently dropped would be a wrong
 * answer. Reasoning text that a server with a reasoning parser splits off ({@code reasoning_content}) is not
 * carried either (see the mappings' lossy points).
 *
 * <p>Tokens go out as soon as their chunk arrives: no token waits for the next one. Usage arrives in a chunk of its
 * own after the last finish, so the GenerationFinished events (which carry no token) are held back until the stream
 * ends; {@link #end()} releases them, the usage on the last. One instance per stream; not thread-safe.
 */
public final class CompletionEvents {

    private final String requestId;
    private final Set<Integer> finished = new HashSet<>();
    private final List<GenerateResponse> heldFinishes = new ArrayList<>();
    private Usage usage;

    public CompletionEvents(String requestId) {
        this.requestId = requestId;
    }

    /** Events a chunk (or a whole non-streaming answer) completes: its tokens; its finishes wait for {@link #end()}. */
    public List<GenerateResponse> accept(CompletionChunk chunk) {
        List<GenerateResponse> ready = new ArrayList<>(chunk.choices().size());
        for (CompletionChunk.Choice choice : chunk.choices()) {
            int index = choice.index();
            if (choice.toolCalls()) {
                throw EngineException.sentFinal(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, "the engine answered"
                        + " output " + index + " with tool calls, which openengine.v1 events cannot carry");
            }
            TokenOutput tokens = CompletionTokens.of(choice);
            if (tokens != null) {
                ready.add(GenerateResponse.newBuilder().setRequestId(requestId).setToken(tokens).build());
            }
            JsonNode reason = choice.finishReason();
            if (reason != null && !reason.isNull() && finished.add(index)) {
                heldFinishes.add(GenerateResponse.newBuilder().setRequestId(requestId)
                        .setFinished(finish(index, reason.asText(), choice.stopReason())).build());
            }
        }
        JsonNode u = chunk.usage();
        if (u != null && u.isObject()) {
            usage = usage(u); // cumulative: the newest wins (continuous usage stats send it on every chunk)
        }
        return ready;
    }

    /** As {@link #accept(CompletionChunk)}, for a chunk or answer parsed as a tree. */
    public List<GenerateResponse> accept(JsonNode chunk) {
        return accept(CompletionChunk.of(chunk));
    }

    /** The held-back finishes, the usage on the last; empty if the stream finished no output. */
    public List<GenerateResponse> end() {
        List<GenerateResponse> out = new ArrayList<>(heldFinishes);
        heldFinishes.clear();
        if (!out.isEmpty() && usage != null) {
            int last = out.size() - 1;
            out.set(last, out.get(last).toBuilder().setUsage(usage).build());
        }
        return out;
    }

    /**
     * The held-back finishes without usage, for a stream that failed: what the engine produced before the failure
     * still reaches the client, and the failure becomes the terminal event.
     */
    public List<GenerateResponse> abandon() {
        List<GenerateResponse> out = new ArrayList<>(heldFinishes);
        heldFinishes.clear();
        return out;
    }

    /** Outputs that got their GenerationFinished so far. */
    public Set<Integer> finishedOutputs() {
        return Set.copyOf(finished);
    }

    private static GenerationFinished finish(int index, String reason, JsonNode stopReason) {
        GenerationFinished.Builder f = GenerationFinished.newBuilder().setOutputIndex(index);
        switch (reason) {
            case "stop" -> {
                f.setReason(FinishReason.FINISH_REASON_STOP);
                // stop_reason: the stop token id, the stop string, or null for end-of-sequence
                if (stopReason != null && stopReason.isIntegralNumber()) {
                    f.setStopMatch(StopMatch.newBuilder().setStopTokenId(stopReason.asInt()));
                } else if (stopReason != null && stopReason.isTextual()) {
                    f.setStopMatch(StopMatch.newBuilder().setStopText(stopReason.asText()));
                }
            }
            case "length" -> f.setReason(FinishReason.FINISH_REASON_LENGTH);
            case "abort", "cancelled" -> f.setReason(FinishReason.FINISH_REASON_CANCELLED);
            case "error" -> throw EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
                    "the engine finished output " + index + " with an error");
            default -> f.setReason(FinishReason.FINISH_REASON_UNSPECIFIED).setMessage(reason);
        }
        return f.build();
    }

    private static Usage usage(JsonNode u) {
        Usage.Builder b = Usage.newBuilder()
                .setPromptTokens(u.path("prompt_tokens").asInt())
                .setCompletionTokens(u.path("completion_tokens").asInt())
                .setTotalTokens(u.path("total_tokens").asInt());
        JsonNode cached = u.path("prompt_tokens_details").path("cached_tokens");
        if (cached.isNumber()) {
            b.setCachedPromptTokens(cached.asInt());
        }
        JsonNode reasoning = u.path("completion_tokens_details").path("reasoning_tokens");
        if (reasoning.isNumber()) {
            b.setReasoningTokens(reasoning.asInt());
        }
        return b.build();
    }
}
