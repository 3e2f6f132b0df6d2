package io.handoff.gateway.control;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.discovery.*}: how the control plane samples the fleet and follows the drain mark. */
@ConfigMapping(prefix = "handoff.discovery")
public interface DiscoveryConfig {

    /** Time between two samples of every endpoint's native discovery and load surface, and of the store. */
    @WithDefault("5s")
    Duration samplePeriod();

    /** Whether sampling runs on a timer (tests turn it off and sample themselves); the sample at start always runs. */
    @WithDefault("true")
    boolean samplingEnabled();

    /** Longest wait for one try of one endpoint's probe. */
    @WithDefault("5s")
    Duration probeTimeout();

    /**
     * Times a lost probe (no answer within {@link #probeTimeout()}, or unhealthy for a reason that is not a verdict
     * on the endpoint's role or model) is tried again within one sample, before it counts against the endpoint.
     * 0: none.
     */
    @WithDefault("1")
    int probeRetries();

    /** Wait before a lost probe is tried again. */
    @WithDefault("200ms")
    Duration probeRetryDelay();

    /** Random spread, either way, of that wait, so that replicas probing one engine do not retry in step. */
    @WithDefault("100ms")
    Duration probeRetryJitter();

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
