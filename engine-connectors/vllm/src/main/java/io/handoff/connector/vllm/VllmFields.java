package io.handoff.connector.vllm;

import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.FamilyFields;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Set;

/**
 * Which openengine.v1 request fields the vLLM connector carries, and the value rules vLLM adds. Everything else
 * is refused with UNSUPPORTED_FEATURE before a byte is sent. The same lists are written in
 * {@code mappings/vllm.mapping.json}; the tests hold the two together.
 */
final class VllmFields {

    /** Fields that become part of the native body. */
    static final Set<String> CARRIED = Set.of(
            "model", "prompt", "token_ids",
            "sampling.temperature", "sampling.top_p", "sampling.top_k", "sampling.min_p",
            "sampling.frequency_penalty", "sampling.presence_penalty", "sampling.repetition_penalty",
            "sampling.seed", "sampling.num_sequences",
            "stopping.max_tokens", "stopping.min_tokens", "stopping.conditions.stop_text",
            "stopping.conditions.stop_token_id", "stopping.ignore_eos", "stopping.include_stop_in_output",
            "response.return_output_logprobs", "response.output_candidates.top_n",
            "kv.cache_salt",
            "guided.json_schema", "guided.regex", "guided.ebnf_grammar", "guided.structural_tag", "guided.choice",
            "guided.json_object",
            "lora_name", "extra");

    /** Fields the gateway itself consumes (identity, session, style); they are never sent to vLLM. */
    static final Set<String> GATEWAY = FamilyFields.GATEWAY;

    /**
     * {@code extra} keys passed to vLLM at the top level of the body: native knobs that mean the same on both legs
     * and cannot change what the handoff decided (no stream, token limits, n, echo or kv_transfer_params).
     */
    static final Set<String> EXTRA_KEYS = Set.of("priority", "user", "skip_special_tokens",
            "spaces_between_special_tokens", "add_special_tokens", "truncate_prompt_tokens", "logit_bias",
            "allowed_token_ids", "bad_words");

    /**
     * {@code extra} keys a chat passes besides {@link #EXTRA_KEYS}: the messages and the chat fields of vLLM's
     * {@code /v1/chat/completions} that the template or the output format read, the same on both legs. Tool calls
     * are refused ({@link ChatRequests#TOOL_FIELDS}), as are {@code echo}, {@code n}, {@code stream} and
     * {@code kv_transfer_params}.
     */
    static final Set<String> CHAT_EXTRA_KEYS = Set.of("messages", "chat_template", "chat_template_kwargs",
            "add_generation_prompt", "continue_final_message", "documents", "response_format",
            "mm_processor_kwargs");

    private static final FamilyFields FIELDS = new FamilyFields("vllm", CARRIED, EXTRA_KEYS, CHAT_EXTRA_KEYS);

    private VllmFields() {
    }

    /**
     * Refuses what vLLM cannot carry for this leg shape; {@code handoff} is true for a prefill/decode pair and false
     * for a decode that prefills locally.
     */
    static void check(GenerateRequest request, boolean handoff) {
        FIELDS.refuseUncarried(request);
        if ((request.getInputCase() == GenerateRequest.InputCase.INPUT_NOT_SET && !ChatRequests.isChat(request))
                || (request.hasTokenIds() && request.getTokenIds().getIdsCount() == 0)) {
            throw EngineException.invalid("the request has no prompt");
        }
        if (request.getSampling().hasSeed() && request.getSampling().getSeed() < 0) {
            // uint64 on the wire; vLLM takes a signed 64-bit seed
            throw EngineException.invalid("sampling.seed " + Long.toUnsignedString(request.getSampling().getSeed())
                    + " is above vLLM's maximum " + Long.MAX_VALUE);
        }
        if (handoff && request.getSampling().hasNumSequences() && request.getSampling().getNumSequences() > 1) {
            // vLLM answers one set of kv_transfer_params per request: the other sequences' KV would be parked and lost
            throw EngineException.unsupported("sampling.num_sequences > 1 cannot be handed off by vLLM (one"
                    + " kv_transfer_params per request)");
        }
        FIELDS.refuseUncarriedExtra(request);
        FamilyFields.requireJsonSchema(request);
    }
}
