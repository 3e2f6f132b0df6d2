package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Struct;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.CandidateTokenSelection;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GuidedDecoding;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.ResponseOptions;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StopCondition;
import io.handoff.openengine.v1.StoppingOptions;

import java.math.BigInteger;

/**
 * Builds the {@code /v1/completions} body of an openengine.v1 {@code GenerateRequest}, or its
 * {@code /v1/chat/completions} body when the request is a chat ({@link ChatRequests}), one hook per field group.
 * The defaults use the OpenAI names and the extension names the OpenAI-compatible engine servers share
 * ({@code top_k}, {@code min_p}, {@code repetition_penalty}, {@code min_tokens}, {@code ignore_eos},
 * {@code stop_token_ids}, {@code include_stop_str_in_output}, {@code prompt_logprobs}, {@code cache_salt}); a family
 * overrides a hook where its engine differs. Guided decoding and LoRA have no common spelling, so their defaults
 * refuse.
 *
 * <p>The builder writes every field the request sets; which fields a family carries at all is decided earlier, with
 * {@link RequestFieldPaths#refuseOthers}, so a field never reaches a hook it does not belong to.
 *
 * <p>A chat body differs from a completion body in two places only: it has no {@code prompt} (its
 * {@code messages} and other chat fields come from {@code extra}, as the client sent them), and logprobs are
 * {@code logprobs: true} with {@code top_logprobs: N} rather than {@code logprobs: N}. Everything else (sampling,
 * stopping, the extension names) is spelled the same on both endpoints of the engine servers.
 */
public class CompletionBodyBuilder {

    /** The body for the request, with {@code routeModel} where the request names no model. */
    public ObjectNode build(GenerateRequest request, String routeModel) {
        ObjectNode body = Json.object();
        body.put("model", request.getModel().isEmpty() ? routeModel : request.getModel());
        prompt(request, body);
        if (request.hasSampling()) {
            sampling(request.getSampling(), body);
        }
        if (request.hasStopping()) {
            stopping(request.getStopping(), body);
        }
        if (request.hasResponse()) {
            if (ChatRequests.isChat(request)) {
                chatResponse(request.getResponse(), body);
            } else {
                response(request.getResponse(), body);
            }
        }
        if (request.hasKv()) {
            kv(request.getKv(), body);
        }
        if (request.hasGuided()) {
            guided(request.getGuided(), body);
        }
        if (!request.getLoraName().isEmpty()) {
            lora(request.getLoraName(), body);
        }
        if (request.hasExtra()) {
            extra(request.getExtra(), body);
        }
        return body;
    }

    /**
     * Text as a string, token ids as a list of integers (one prompt, never a batch); nothing for a chat, whose
     * messages are written with {@code extra}.
     */
    protected void prompt(GenerateRequest request, ObjectNode body) {
        switch (request.getInputCase()) {
            case PROMPT -> body.put("prompt", request.getPrompt());
            case TOKEN_IDS -> {
                ArrayNode ids = body.putArray("prompt");
                request.getTokenIds().getIdsList().forEach(id -> ids.add(Integer.toUnsignedLong(id)));
            }
            default -> {
                if (!ChatRequests.isChat(request)) {
                    throw EngineException.invalid("the request has no prompt (neither text nor token ids nor chat"
                            + " messages)");
                }
            }
        }
    }

    protected void sampling(SamplingParams s, ObjectNode body) {
        if (s.hasTemperature()) {
            body.put("temperature", s.getTemperature());
        }
        if (s.hasTopP()) {
            body.put("top_p", s.getTopP());
        }
        if (s.hasTopK()) {
            body.put("top_k", s.getTopK());
        }
        if (s.hasMinP()) {
            body.put("min_p", s.getMinP());
        }
        if (s.hasFrequencyPenalty()) {
            body.put("frequency_penalty", s.getFrequencyPenalty());
        }
        if (s.hasPresencePenalty()) {
            body.put("presence_penalty", s.getPresencePenalty());
        }
        if (s.hasRepetitionPenalty()) {
            body.put("repetition_penalty", s.getRepetitionPenalty());
        }
        if (s.hasSeed()) {
            // uint64 on the wire: a Java long below zero is a seed at or above 2^63
            body.put("seed", new BigInteger(Long.toUnsignedString(s.getSeed())));
        }
        if (s.hasNumSequences()) {
            body.put("n", Integer.toUnsignedLong(s.getNumSequences()));
        }
    }

    protected void stopping(StoppingOptions s, ObjectNode body) {
        if (s.hasMaxTokens()) {
            body.put("max_tokens", Integer.toUnsignedLong(s.getMaxTokens()));
        }
        if (s.hasMinTokens()) {
            body.put("min_tokens", Integer.toUnsignedLong(s.getMinTokens()));
        }
        ArrayNode texts = null;
        ArrayNode tokenIds = null;
        for (StopCondition c : s.getConditionsList()) {
            switch (c.getConditionCase()) {
                case STOP_TEXT -> (texts == null ? texts = body.putArray("stop") : texts).add(c.getStopText());
                case STOP_TOKEN_ID -> (tokenIds == null ? tokenIds = body.putArray("stop_token_ids") : tokenIds)
                        .add(Integer.toUnsignedLong(c.getStopTokenId()));
                default -> throw EngineException.invalid("a stop condition sets neither a text nor a token id");
            }
        }
        if (s.hasIgnoreEos()) {
            body.put("ignore_eos", s.getIgnoreEos());
        }
        if (s.hasIncludeStopInOutput()) {
            body.put("include_stop_str_in_output", s.getIncludeStopInOutput());
        }
    }

    /**
     * Logprobs: {@code logprobs: N} asks for the sampled token's logprob and the top N alternatives, {@code 0} for
     * the sampled token alone; {@code prompt_logprobs} likewise for the prompt.
     */
    protected void response(ResponseOptions r, ObjectNode body) {
        Integer output = logprobCount(r.hasReturnOutputLogprobs() && r.getReturnOutputLogprobs(),
                r.hasOutputCandidates() ? r.getOutputCandidates() : null, "output");
        if (output != null) {
            body.put("logprobs", output);
        }
        Integer prompt = logprobCount(r.hasReturnPromptLogprobs() && r.getReturnPromptLogprobs(),
                r.hasPromptCandidates() ? r.getPromptCandidates() : null, "prompt");
        if (prompt != null) {
            body.put("prompt_logprobs", prompt);
        }
    }

    /**
     * Chat logprobs: {@code logprobs: true} asks for the sampled token's logprob, {@code top_logprobs: N} for the top
     * N alternatives as well; {@code prompt_logprobs} is the engines' extension, as for completions.
     */
    protected void chatResponse(ResponseOptions r, ObjectNode body) {
        Integer output = logprobCount(r.hasReturnOutputLogprobs() && r.getReturnOutputLogprobs(),
                r.hasOutputCandidates() ? r.getOutputCandidates() : null, "output");
        if (output != null) {
            body.put("logprobs", true);
            if (output > 0) {
                body.put("top_logprobs", output);
            }
        }
        Integer prompt = logprobCount(r.hasReturnPromptLogprobs() && r.getReturnPromptLogprobs(),
                r.hasPromptCandidates() ? r.getPromptCandidates() : null, "prompt");
        if (prompt != null) {
            body.put("prompt_logprobs", prompt);
        }
    }

    private static Integer logprobCount(boolean wanted, CandidateTokenSelection candidates, String what) {
        if (candidates != null && candidates.getSelectionCase() != CandidateTokenSelection.SelectionCase.SELECTION_NOT_SET) {
            if (candidates.getSelectionCase() != CandidateTokenSelection.SelectionCase.TOP_N) {
                throw EngineException.unsupported(what + " candidates: only top_n can be expressed as a count");
            }
            return candidates.getTopN();
        }
        return wanted ? 0 : null;
    }

    protected void kv(KvOptions kv, ObjectNode body) {
        if (kv.hasCacheSalt()) {
            body.put("cache_salt", kv.getCacheSalt());
        }
    }

    /** No common spelling across engines: a family that carries guided decoding overrides this. */
    protected void guided(GuidedDecoding guided, ObjectNode body) {
        throw EngineException.unsupported("guided decoding is not carried by this engine family");
    }

    /** No common spelling across engines: a family that serves LoRA adapters overrides this. */
    protected void lora(String loraName, ObjectNode body) {
        throw EngineException.unsupported("lora_name is not carried by this engine family");
    }

    /**
     * Engine-specific parameters, merged at the top level of the body. A key that the typed fields (or the handoff)
     * already set is refused: {@code extra} may add to a request, never override what Handoff decided.
     */
    protected void extra(Struct extra, ObjectNode body) {
        extra.getFieldsMap().forEach((key, value) -> {
            if (body.has(key)) {
                throw EngineException.unsupported("extra." + key + " would override a typed field");
            }
            body.set(key, StructJson.toJson(value));
        });
    }
}
