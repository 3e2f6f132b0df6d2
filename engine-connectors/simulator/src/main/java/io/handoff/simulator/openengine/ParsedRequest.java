package io.handoff.simulator.openengine;

import io.grpc.Status;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.StopCondition;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Tokenizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the simulated engine reads from one GenerateRequest. Sampling knobs other than {@code num_sequences}, logprob
 * requests, guided decoding, media, LoRA and {@code extra} are accepted and ignored: the deterministic model has no use
 * for them (the connector's mapping tests check that they arrive, not what an engine does with them).
 */
final class ParsedRequest {
    final String requestId;
    final int[] promptIds;
    final int maxTokens;
    final int minTokens;
    final boolean ignoreEos;
    final boolean includeStopInOutput;
    final List<String> stopTexts = new ArrayList<>();
    final Set<Integer> stopTokenIds = new HashSet<>();
    final int sequences;
    /** The session to pull, or null for a request that prefills here. */
    final KvSessionRef session;

    private ParsedRequest(GenerateRequest r, String requestId, OpenEngineConfig cfg) {
        this.requestId = requestId;
        switch (r.getInputCase()) {
            case PROMPT:
                promptIds = Tokenizer.encode(r.getPrompt());
                break;
            case TOKEN_IDS:
                promptIds = r.getTokenIds().getIdsList().stream().mapToInt(Integer::intValue).toArray();
                break;
            default:
                throw invalid("one of prompt or token_ids is required");
        }
        if (promptIds.length == 0) {
            throw invalid("the prompt is empty");
        }
        StoppingOptions s = r.getStopping();
        maxTokens = s.hasMaxTokens() ? s.getMaxTokens() : cfg.defaultMaxTokens;
        minTokens = s.hasMinTokens() ? s.getMinTokens() : 0;
        if (minTokens > maxTokens) {
            throw invalid("min_tokens " + minTokens + " is greater than max_tokens " + maxTokens);
        }
        ignoreEos = s.hasIgnoreEos() && s.getIgnoreEos();
        includeStopInOutput = s.hasIncludeStopInOutput() && s.getIncludeStopInOutput();
        for (StopCondition c : s.getConditionsList()) {
            if (c.hasStopText()) {
                stopTexts.add(c.getStopText());
            } else if (c.hasStopTokenId()) {
                stopTokenIds.add(c.getStopTokenId());
            }
        }
        sequences = r.getSampling().hasNumSequences() ? r.getSampling().getNumSequences() : 1;
        if (sequences < 1 || sequences > cfg.maxSequences) {
            throw invalid("num_sequences must be in [1, " + cfg.maxSequences + "]");
        }
        session = r.hasKv() && r.getKv().hasSession() ? r.getKv().getSession() : null;
        if (session != null && session.getSessionId().isEmpty()) {
            throw invalid("kv.session.session_id is empty");
        }
    }

    /**
     * Parses and validates a request; a problem is a gRPC status, as upstream wants for failures before acceptance.
     *
     * @param mintedId the request id to use when the request has none
     */
    static ParsedRequest parse(GenerateRequest r, String mintedId, OpenEngineConfig cfg) {
        return new ParsedRequest(r, r.getRequestId().isEmpty() ? mintedId : r.getRequestId(), cfg);
    }

    private static RuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
