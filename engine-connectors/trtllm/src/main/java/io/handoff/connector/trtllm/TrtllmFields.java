package io.handoff.connector.trtllm;

import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.FamilyFields;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Set;

/**
 * Which openengine.v1 request fields the TensorRT-LLM connector carries, and the value rules it adds. Everything else
 * is refused with UNSUPPORTED_FEATURE before a byte is sent. The same lists are written in
 * {@code mappings/trtllm.mapping.json}; the tests hold the two together.
 */
final class TrtllmFields {

    /** Fields that become part of the native body (on both legs). */
    static final Set<String> CARRIED = Set.of(
            "model", "prompt", "token_ids",
            "sampling.temperature", "sampling.top_p", "sampling.top_k", "sampling.min_p",
            "sampling.frequency_penalty", "sampling.presence_penalty", "sampling.repetition_penalty",
            "sampling.seed", "sampling.num_sequences",
            "stopping.max_tokens", "stopping.min_tokens", "stopping.conditions.stop_text",
            "stopping.conditions.stop_token_id", "stopping.ignore_eos", "stopping.include_stop_in_output",
            "extra");

    /** Fields the gateway itself consumes (identity, session, style); they are never sent to the workers. */
    static final Set<String> GATEWAY = FamilyFields.GATEWAY;

    /**
     * {@code extra} keys passed at the top level of the body: tokenizer switches that mean the same on both legs.
     * {@code disaggregated_params} (and every other key) is refused: handoff fields come only from the connector,
     * never from a client (opaque-state and ctx_info_endpoint injection).
     */
    static final Set<String> EXTRA_KEYS = Set.of("add_special_tokens", "skip_special_tokens",
            "spaces_between_special_tokens", "user");

    /**
     * {@code extra} keys a chat passes besides {@link #EXTRA_KEYS}: the messages and the fields of trtllm-serve's
     * {@code /v1/chat/completions} that its template or the output format read, the same on every leg. Tool calls
     * are refused ({@link ChatRequests#TOOL_FIELDS}); {@code prompt_token_ids} is the connector's (the context's
     * tokens, on a context-first generation).
     */
    static final Set<String> CHAT_EXTRA_KEYS = Set.of("messages", "chat_template", "chat_template_kwargs",
            "add_generation_prompt", "documents", "response_format");

    private static final FamilyFields FIELDS = new FamilyFields("trtllm", CARRIED, EXTRA_KEYS, CHAT_EXTRA_KEYS);

    private TrtllmFields() {
    }

    /** Refuses what trtllm-serve cannot carry; {@code handoff} is false for a decode that prefills locally. */
    static void check(GenerateRequest request, boolean handoff) {
        for (String key : request.getExtra().getFieldsMap().keySet()) {
            if (key.equals("disaggregated_params") || key.equals("prompt_token_ids")
                    || key.equals("prompt_token_ids_b64")) {
                throw EngineException.unsupported("extra." + key + " is never forwarded: the handoff fields of"
                        + " trtllm-serve are set by the connector alone");
            }
        }
        FIELDS.refuseUncarried(request);
        if ((request.getInputCase() == GenerateRequest.InputCase.INPUT_NOT_SET && !ChatRequests.isChat(request))
                || (request.hasPrompt() && request.getPrompt().isEmpty())
                || (request.hasTokenIds() && request.getTokenIds().getIdsCount() == 0)) {
            throw EngineException.invalid("the request has no prompt");
        }
        if (handoff && request.getSampling().hasNumSequences() && request.getSampling().getNumSequences() > 1) {
            throw EngineException.unsupported("sampling.num_sequences > 1 cannot be handed off by trtllm-serve (a"
                    + " context answer has exactly one choice and one disaggregated_params)");
        }
        FIELDS.refuseUncarriedExtra(request);
    }
}
