package io.handoff.gateway.control;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.stop.*}: how a replica stops on SIGTERM ({@link ReplicaStop}). */
@ConfigMapping(prefix = "handoff.stop")
public interface StopConfig {

    /**
     * How long a stopping replica lets its running Generates finish before it aborts what remains. With the abort's
     * own wait ({@code handoff.orchestration.abort-timeout}) it must stay under the time the platform gives a
     * process between SIGTERM and SIGKILL (Kubernetes' {@code terminationGracePeriodSeconds}, 30 s by default).
     */
    @WithDefault("20s")
    Duration gracePeriod();
}
