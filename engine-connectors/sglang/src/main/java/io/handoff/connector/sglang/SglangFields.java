package io.handoff.connector.sglang;

import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.FamilyFields;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;

import java.util.Set;

/**
 * Which openengine.v1 request fields the SGLang connector carries on {@code /v1/completions}, and the value rules
 * SGLang adds. Everything else is refused with UNSUPPORTED_FEATURE before a byte is sent. The same lists are written
 * in {@code mappings/sglang.mapping.json}; the tests hold the two together.
 */
final class SglangFields {

    /** Fields that become part of the native body of both legs. */
    static final Set<String> CARRIED = Set.of(
            "model", "prompt", "token_ids",
            "sampling.temperature", "sampling.top_p", "sampling.top_k", "sampling.min_p",
            "sampling.frequency_penalty", "sampling.presence_penalty", "sampling.repetition_penalty",
            "sampling.num_sequences",
            "stopping.max_tokens", "stopping.min_tokens", "stopping.conditions.stop_text",
            "stopping.conditions.stop_token_id", "stopping.ignore_eos", "stopping.include_stop_in_output",
            "response.return_output_logprobs", "response.output_candidates.top_n",
            "kv.cache_salt",
            "guided.json_schema", "guided.regex", "guided.ebnf_grammar",
            "lora_name", "extra");

    /** Fields the gateway itself consumes (identity, session, style); they are never sent to SGLang. */
    static final Set<String> GATEWAY = FamilyFields.GATEWAY;

    /**
     * {@code extra} keys passed at the top level of both bodies: native knobs that mean the same on both legs and
     * cannot touch what the handoff decided (never rid, bootstrap_*, stream, n, routed_dp_rank).
     */
    static final Set<String> EXTRA_KEYS = Set.of("priority", "user", "skip_special_tokens",
            "spaces_between_special_tokens", "logit_bias", "extra_key", "custom_params");

    /**
     * {@code extra} keys a chat passes besides {@link #EXTRA_KEYS}: the messages and the fields of SGLang's
     * {@code /v1/chat/completions} that its template or the output format read, the same on both legs
     * ({@code separate_reasoning: false} keeps a reasoning model's thinking in {@code content}, where the events
     * carry it). Tool calls are refused ({@link ChatRequests#TOOL_FIELDS}).
     */
    static final Set<String> CHAT_EXTRA_KEYS = Set.of("messages", "chat_template_kwargs", "continue_final_message",
            "response_format", "separate_reasoning");

    private static final FamilyFields FIELDS = new FamilyFields(SglangConnectorService.FAMILY, CARRIED, EXTRA_KEYS,
            CHAT_EXTRA_KEYS);

    private SglangFields() {
    }

    /** Refuses what SGLang cannot carry on a prefill/decode pair, before anything is sent. */
    static void check(GenerateRequest request) {
        FIELDS.refuseUncarried(request);
        boolean chat = ChatRequests.isChat(request);
        if ((request.getInputCase() == GenerateRequest.InputCase.INPUT_NOT_SET && !chat)
                || (request.hasTokenIds() && request.getTokenIds().getIdsCount() == 0)
                || (request.getInputCase() == GenerateRequest.InputCase.PROMPT && request.getPrompt().isEmpty())) {
            throw EngineException.invalid("the request has no prompt");
        }
        if (request.getSampling().hasNumSequences() && request.getSampling().getNumSequences() > 1) {
            // one scalar room shared by n samples never pairs (the engine hangs until its timeouts, sglang PRs
            // #26486, #30723, #40297); per-sample room lists depend on those fixes, so n > 1 is not handed off
            throw EngineException.unsupported("sampling.num_sequences > 1 cannot be handed off by sglang: the"
                    + " samples would share one bootstrap_room, which hangs the engines");
        }
        FIELDS.refuseUncarriedExtra(request);
        if (chat && request.hasGuided() && request.getGuided().hasJsonSchema()) {
            // the chat endpoint has no top-level json_schema and would ignore it: the output would be unconstrained
            throw EngineException.unsupported("guided.json_schema is not carried by sglang's /v1/chat/completions;"
                    + " send the schema as extra.response_format");
        }
        FamilyFields.requireJsonSchema(request);
    }
}
