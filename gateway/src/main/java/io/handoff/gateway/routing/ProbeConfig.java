package io.handoff.gateway.routing;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/**
 * {@code handoff.discovery.probe-*}: the guard around every probe of an endpoint ({@link ProbeGuard}), a fleet
 * sample's and an open breaker's recovery probe alike. The pools that run the probes are made here, in routing, so
 * the settings are read here; the rest of {@code handoff.discovery} is the control plane's.
 */
@ConfigMapping(prefix = "handoff.discovery")
public interface ProbeConfig {

    /** Longest wait for one try of one endpoint's probe. */
    @WithDefault("5s")
    Duration probeTimeout();

    /**
     * Times a lost probe (no answer within {@link #probeTimeout()}, or unhealthy for a reason that is not a verdict
     * on the endpoint's role or model) is tried again, before it counts against the endpoint. 0: none.
     */
    @WithDefault("1")
    int probeRetries();

    /** Wait before a lost probe is tried again. */
    @WithDefault("200ms")
    Duration probeRetryDelay();

    /** Random spread, either way, of that wait, so that replicas probing one engine do not retry in step. */
    @WithDefault("100ms")
    Duration probeRetryJitter();
}
