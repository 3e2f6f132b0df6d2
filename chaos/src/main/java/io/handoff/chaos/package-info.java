/**
 * The chaos harness: separate processes (a redis-server or a Redis Cluster of six, the simulated engine fleet, three
 * packaged gateway replicas), a mixed load over the wire only (openengine.v1 gRPC, the OpenAI-compatible HTTP front, the REST mirror,
 * the simulators' {@code /sim/*}), faults injected on a schedule, a history of every operation and its answer, and
 * the invariants checked on that history and on the engines at the end. {@link io.handoff.chaos.ChaosMain} runs it
 * from the command line; {@code ChaosShortRunIT} and {@code ChaosClusterShortRunIT} run short ones in the build.
 * {@code SharedRateLimitIT} reuses the harness's processes (a redis-server, the fleet, two replicas) to show a
 * tenant's rate limits shared by every replica.
 */
package io.handoff.chaos;
