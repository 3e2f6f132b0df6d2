package io.handoff.gateway.reaper;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.reaper.*}: how often expiry is looked for and how cleanup is retried. */
@ConfigMapping(prefix = "handoff.reaper")
public interface ReaperConfig {

    /** Whether this replica sweeps on a timer. Every replica may; each action still happens once. */
    @WithDefault("true")
    boolean enabled();

    /** Time between sweeps: expiry is late by at most this plus one claim's handling. */
    @WithDefault("1s")
    Duration period();

    /** Most sessions acted on per bucket per sweep. */
    @WithDefault("256")
    int batchSize();

    /** How long a replica holds a cleanup claim before another may take it over. */
    @WithDefault("30s")
    Duration claimTtl();

    /** Failed discharge attempts before an obligation is abandoned to the engine's own timer. */
    @WithDefault("5")
    int maxAttempts();

    /** Wait before a failed discharge is tried again. */
    @WithDefault("5s")
    Duration retryBackoff();
}
