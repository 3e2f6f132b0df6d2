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
 */
package io.handoff.simulator.vllm;
