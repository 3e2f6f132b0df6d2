/**
 * The connector for engines that already speak openengine.v1 over gRPC: TensorRT-LLM's
 * {@code trtllm-serve --grpc --grpc-protocol openengine} adapter, Dynamo's sidecars, and the openengine family of the
 * Handoff simulator.
 *
 * <p>The engine's own flow is the handoff: a Generate on a prefill engine ends with one {@code PrefillReady} carrying
 * an engine-minted {@code KvSessionRef}; a Generate on a decode engine with {@code kv.session} set pulls that KV and
 * streams the answer. Requests go through unchanged (it is the same schema); the gateway only owns
 * {@code kv.session} (and its own {@code kv} additions). The engine owns the session's lifetime: no allocate, renew or
 * release exists, so the connector declares the engine's hold ({@code hold-seconds}) and answers discharges with
 * "the engine holds it until then", unless the deployment frees parked KV on {@code Abort(kv_session)}
 * ({@code abort-cleanup=true}, checked against {@code KvConnectorInfo.supports_abort_cleanup} by the probe).
 *
 * <p>See {@code mappings/openengine.md} for the field-by-field and state-by-state mapping, and
 * {@link io.handoff.connector.openengine.OpenEngineOptions} for the route options.
 */
package io.handoff.connector.openengine;
