package io.handoff.gateway.orchestration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.orchestration.*}: how a replica keeps the sessions of its running requests alive. */
@ConfigMapping(prefix = "handoff.orchestration")
public interface OrchestrationConfig {

    /**
     * How often the keeper looks at the leases of running requests. A lease is renewed once a third of it has
     * passed (as etcd's keepalives do), so the tick must be well under a third of the shortest route lease.
     */
    @WithDefault("1s")
    Duration keepaliveTick();

    /** Whether the keeper runs on a timer; tests turn it off and tick it themselves. */
    @WithDefault("true")
    boolean keepaliveEnabled();

    /** Longest wait for an engine's native abort when a request is cancelled or fails. */
    @WithDefault("5s")
    Duration abortTimeout();
}
