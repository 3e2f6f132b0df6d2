/**
 * Faithful fake inference engines for testing and benchmarking the Handoff gateway against the native
 * disaggregation APIs of vLLM, SGLang and TensorRT-LLM, without GPUs.
 *
 * <p>This package holds what every family shares:
 * <ul>
 *   <li>{@link io.handoff.simulator.SimEngine}: a Vert.x verticle per engine (all state on one event loop), with the
 *       {@code /sim/*} admin endpoints (stats, faults, clock, expiry, crash);</li>
 *   <li>{@link io.handoff.simulator.KvBlockPool}, {@link io.handoff.simulator.HoldTable},
 *       {@link io.handoff.simulator.Scheduler}: KV blocks, pinned handoff KV with native deadlines, admission;</li>
 *   <li>{@link io.handoff.simulator.PrefixCache}: the prefix cache that decides what a prefill costs;</li>
 *   <li>{@link io.handoff.simulator.SimClock}: the injectable time source that tests move instead of sleeping;</li>
 *   <li>{@link io.handoff.simulator.Tokenizer}, {@link io.handoff.simulator.OutputModel},
 *       {@link io.handoff.simulator.Generation}: the deterministic model, so that aggregated and disaggregated runs
 *       of one prompt give the same tokens and a decode from lost KV gives different ones;</li>
 *   <li>{@link io.handoff.simulator.Faults} and {@link io.handoff.simulator.EngineStats}, with the clients' cancels
 *       counted by the phase of the handoff they landed in (a {@link io.handoff.simulator.Job}'s
 *       {@link io.handoff.simulator.Leg}, and whether a token went out);</li>
 *   <li>{@link io.handoff.simulator.SimulatorMain} and {@link io.handoff.simulator.SimFleet} to run engines on their
 *       own.</li>
 * </ul>
 * Families live in {@code .vllm}, {@code .sglang} and {@code .trtllm}; the OpenAI wire shapes in {@code .openai}.
 * Simulators depend on nothing of Handoff's but the wire shapes they imitate.
 */
package io.handoff.simulator;
