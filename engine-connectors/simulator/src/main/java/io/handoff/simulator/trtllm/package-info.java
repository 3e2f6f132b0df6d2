/**
 * A simulated TensorRT-LLM worker ({@code trtllm-serve} with a {@code cache_transceiver_config}), driven the way the
 * {@code trtllm-serve disaggregated} orchestrator or a third-party gateway drives it.
 *
 * <p>{@code disaggregated_params.request_type} picks the leg: {@code context_only} prefills, parks the KV and answers
 * one choice with {@code finish_reason "length"}, the first token and the params a generation needs;
 * {@code generation_only} pulls that KV through the context's (simulated) cache transceiver and generates. With
 * {@code schedule_style 1} (generation-first) the generation request arrives first, registers its receiver at the
 * context's {@code ctx_info_endpoint} and waits; the context request waits for that receiver before it prefills and
 * pushes. The only engine-side cleanup is {@code kv_transfer_timeout_ms}; there is no release API.
 *
 * <p>Client cancels by phase ({@code cancelled_*} in {@code /sim/stats}): trtllm-serve's only cancel is a closed
 * connection. A {@code context_only} request is cancelled during its prefill until it answered (waiting for its
 * generation's receiver included); a {@code generation_only} one before its first token while it receives the KV,
 * mid-stream once a token event is out.
 */
package io.handoff.simulator.trtllm;
