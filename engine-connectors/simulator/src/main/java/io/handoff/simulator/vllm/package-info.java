/**
 * A simulated vLLM OpenAI server with the NixlConnector in pull (READ) mode.
 *
 * <p>Any vLLM simulator can act as prefill or decode per request, as the real NixlConnector does (the role is decided
 * by the proxy through {@code kv_transfer_params}; the configured role is only a label). A prefill request with
 * {@code {"do_remote_decode": true}} pins its prompt blocks and answers with the params a decode needs; a decode
 * request with those params reads the blocks over the simulated NIXL side channel (a small HTTP server on
 * {@code remote_host:remote_port}), which frees them on the prefill. Holds expire after the fixed
 * {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} (legacy builds) or after {@code kv_lease_duration}, renewed by the decode's
 * heartbeats while it has the request (lease builds). See {@link io.handoff.simulator.vllm.VllmConfig.Mode}.
 *
 * <p>Client cancels by phase ({@code cancelled_*} in {@code /sim/stats}): vLLM has no abort API, a cancel is its client
 * closing the connection. The leg is what {@code kv_transfer_params} asked for: {@code do_remote_decode} is the prefill
 * leg, cancelled during its prefill until its answer is out; {@code do_remote_prefill} is the decode leg (a local
 * fallback included), before its first token while it queues, reads the KV or recomputes, mid-stream once a token
 * event is out (a chat stream's role-only first event is not one). A non-streamed decode sends no token before its
 * answer: it is only ever cancelled before its first token.
 */
package io.handoff.simulator.vllm;
