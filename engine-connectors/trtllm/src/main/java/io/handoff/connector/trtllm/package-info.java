/**
 * The TensorRT-LLM connector: Handoff legs on unmodified {@code trtllm-serve} workers through the
 * {@code disaggregated_params} field of {@code /v1/completions}, in both native schedule styles. Context-first: a
 * non-streaming {@code context_only} leg parks the prompt's KV and answers with its disaggregated_params and prompt
 * token ids; the {@code generation_only} leg takes them verbatim. Generation-first: the generation, naming the
 * context worker's transceiver ({@code /server_info}), is sent first and waits; the context leg then prefills and
 * pushes.
 *
 * <p>The connector mints every {@code disagg_request_id} (unique, at or above 2^40, never reused for a retry), never
 * forwards a client's disaggregated_params, and signs protected fields with {@code x-trtllm-disagg-auth} when the
 * route has the workers' key. trtllm-serve has no renew or release call: a parked context stays until a generation
 * pulls it or {@code kv_transfer_timeout_ms} ends, and the connector reports exactly that. Field by field and state by
 * state: {@code mappings/trtllm.md}.
 */
package io.handoff.connector.trtllm;
