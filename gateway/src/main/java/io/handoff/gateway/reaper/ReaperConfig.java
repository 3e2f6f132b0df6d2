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

    /**
     * Longest one engine call of a discharge may take; a call that takes longer counts as failed, like a dropped
     * connection.
     */
    @WithDefault("5s")
    Duration dischargeTimeout();

    /**
     * Times a failed engine call of a discharge (a dropped connection, a 5xx, a timeout) is tried again at once,
     * inside the one attempt, before the attempt counts as failed and {@link #retryBackoff()} takes over. 0: none.
     */
    @WithDefault("2")
    int dischargeRetries();

    /** Wait before the first immediate retry of a discharge call; each next one waits twice as long. */
    @WithDefault("100ms")
    Duration dischargeRetryDelay();

    /** Longest wait between two immediate retries of a discharge call. */
    @WithDefault("1s")
    Duration dischargeRetryMaxDelay();

    /**
     * Random spread, either way, of each wait between immediate retries, so that replicas retrying one engine do
     * not retry in step.
     */
    @WithDefault("50ms")
    Duration dischargeRetryJitter();
}
