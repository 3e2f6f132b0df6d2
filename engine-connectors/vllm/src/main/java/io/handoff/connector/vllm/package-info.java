/**
 * The vLLM connector: Handoff legs on unmodified vLLM servers whose NixlConnector pulls the KV (the default P/D
 * flow). Context-first only: the prefill leg is a non-streaming {@code /v1/completions} call with
 * {@code max_tokens: 1} and {@code kv_transfer_params.do_remote_decode}, which parks the prompt's KV on the producer
 * and answers with the parameters the consumer needs; the decode leg is the client's request plus those parameters,
 * verbatim, streamed.
 *
 * <p>vLLM owns the parked KV alone: there is no HTTP call to renew or release it. The producer frees it when a
 * consumer has read it or when its own timer ends (a fixed {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} on older builds,
 * a lease that the consumer renews once it has the request on newer ones). The connector reports that hold
 * honestly ({@link io.handoff.connector.spi.HeldKv} with its end, discharge answering ENGINE_HOLDS) and refuses to
 * send a decode once the hold may have ended, because vLLM would then decode from freed blocks and answer 200 with
 * wrong output. Field by field and state by state: {@code mappings/vllm.md}.
 */
package io.handoff.connector.vllm;
