package io.handoff.simulator.openengine;

import io.handoff.openengine.v1.EngineError;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.PrefillReady;
import io.handoff.openengine.v1.StopMatch;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;
import io.handoff.simulator.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/** Builds the GenerateResponse events the engine streams, following the upstream event rules. */
final class WireEvents {
    private WireEvents() {
    }

    static GenerateResponse prefillReady(String requestId, KvSessionRef ref) {
        return GenerateResponse.newBuilder().setRequestId(requestId)
            .setPrefillReady(PrefillReady.newBuilder().setKvSession(ref)).build();
    }

    static GenerateResponse error(String requestId, ErrorCode code, String message, boolean retryable) {
        return GenerateResponse.newBuilder().setRequestId(requestId)
            .setError(EngineError.newBuilder().setCode(code).setMessage(message).setRetryable(retryable)).build();
    }

    static GenerateResponse token(String requestId, int outputIndex, int tokenId, String text) {
        TokenInfo info = TokenInfo.newBuilder().setTokenId(tokenId).setToken(Tokenizer.text(tokenId)).build();
        return GenerateResponse.newBuilder().setRequestId(requestId)
            .setToken(TokenOutput.newBuilder().setOutputIndex(outputIndex).addTokens(info).setText(text)).build();
    }

    static GenerateResponse finished(String requestId, int outputIndex, FinishReason reason, StopMatch match,
        String message) {
        GenerationFinished.Builder f = GenerationFinished.newBuilder().setOutputIndex(outputIndex).setReason(reason)
            .setMessage(message);
        if (match != null) {
            f.setStopMatch(match);
        }
        return GenerateResponse.newBuilder().setRequestId(requestId).setFinished(f).build();
    }

    static Usage usage(int promptTokens, int completionTokens) {
        return Usage.newBuilder().setPromptTokens(promptTokens).setCompletionTokens(completionTokens)
            .setTotalTokens(promptTokens + completionTokens).build();
    }

    /**
     * The whole answer of a request: output-scoped TokenOutputs interleaved step by step across outputs, one
     * GenerationFinished per output right after its last token, and Usage (cumulative) on the final response only.
     */
    static List<GenerateResponse> answer(String requestId, List<SequenceOutput> outputs, int promptTokens) {
        List<GenerateResponse> events = new ArrayList<>();
        int longest = 0;
        int completion = 0;
        for (SequenceOutput o : outputs) {
            longest = Math.max(longest, o.size());
            completion += o.size();
        }
        for (int step = 0; step <= longest; step++) {
            for (int k = 0; k < outputs.size(); k++) {
                SequenceOutput o = outputs.get(k);
                if (step < o.size()) {
                    events.add(token(requestId, k, o.ids[step], o.deltas[step]));
                } else if (step == o.size()) {
                    events.add(finished(requestId, k, o.reason, o.match, ""));
                }
            }
        }
        int last = events.size() - 1;
        events.set(last, events.get(last).toBuilder().setUsage(usage(promptTokens, completion)).build());
        return events;
    }
}
