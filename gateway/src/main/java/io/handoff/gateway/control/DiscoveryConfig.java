package io.handoff.gateway.control;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/**
 * {@code handoff.discovery.*}: how the control plane samples the fleet and follows the drain mark. The guard around
 * each endpoint's probe ({@code handoff.discovery.probe-*}) is read by routing's {@code ProbeConfig}: the pools run
 * their probes under it, the sampler's and their breakers' recovery probes alike.
 */
@ConfigMapping(prefix = "handoff.discovery")
public interface DiscoveryConfig {

    /** Time between two samples of every endpoint's native discovery and load surface, and of the store. */
    @WithDefault("5s")
    Duration samplePeriod();

    /** Whether sampling runs on a timer (tests turn it off and sample themselves); the sample at start always runs. */
    @WithDefault("true")
    boolean samplingEnabled();

    /** A sample older than this is reported stale in GetLoad. */
    @WithDefault("30s")
    Duration staleAfter();

    /** Longest wait for the minimal Generate of Health's inference probe, per route. */
    @WithDefault("15s")
    Duration inferenceProbeTimeout();

    /** Longest wait for the session store's answer in Health and in drain progress. */
    @WithDefault("2s")
    Duration storeTimeout();

    /** How often a replica reads the deployment's drain mark from the store. */
    @WithDefault("1s")
    Duration drainPoll();
}
