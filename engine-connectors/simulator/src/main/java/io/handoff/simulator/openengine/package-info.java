/**
 * A simulated engine that already speaks openengine.v1 over gRPC (as trtllm-serve's {@code --grpc-protocol openengine}
 * adapter and Dynamo's sidecars do), in the prefill, decode or aggregated role.
 *
 * <p>The native flow it imitates: a prefill engine answers {@code Inference.Generate} with exactly one terminal
 * {@code PrefillReady{KvSessionRef}} and keeps the prompt's KV under an engine-minted session id until a decode pulls
 * it or its own timeout fires; a decode engine's {@code Generate} with {@code kv.session} set pulls that KV and streams
 * {@code TokenOutput}s, then {@code GenerationFinished} with {@code Usage} on the last response. The engine owns the
 * session's lifetime: there is no renew and no release, and {@code Control.Abort(kv_session)} frees parked KV only when
 * the deployment reports {@code supports_abort_cleanup} (off by default, as on TensorRT-LLM's adapter).
 *
 * <p>It reuses the shared core ({@link io.handoff.simulator.SimEngine}: KV pool, hold table, scheduler, clock, faults,
 * stats, {@code /sim/*} admin on its HTTP port, crash and restart) and the shared deterministic model, so the same
 * prompt gives the same tokens here as on the HTTP families. The gRPC server is plain grpc-java (grpc-netty); every
 * call hops onto the engine's event loop, where all engine state lives. The KV "transfer" between simulators is an
 * HTTP pull on the prefill's {@code kv_transfer} auxiliary port, named in the session ref's endpoints.
 *
 * <p>Client cancels by phase ({@code cancelled_*} in {@code /sim/stats}): a cancelled Generate stream, or a
 * {@code Control.Abort} naming a running request (by id, by the session it produces or pulls, or all). A prefill-role
 * Generate is cancelled during its prefill until its PrefillReady; a Generate with {@code kv.session} before its first
 * token while it pulls the KV, mid-stream once a TokenOutput went out. An Abort of parked KV frees it
 * ({@code freed_by_abort}) and is no cancel. A prefill that takes no time (no {@code prefill-latency-ms}) ends as it is
 * admitted: only while it waits for a slot can it be cancelled during its prefill.
 */
package io.handoff.simulator.openengine;
