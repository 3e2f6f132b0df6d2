package io.handoff.gateway.routing;

import io.handoff.gateway.reaper.ReaperConfig;

import java.time.Duration;

/**
 * The {@code handoff.reaper.*} settings a {@link DischargeGuard} reads, as test data: the immediate retries' delay,
 * max delay, jitter and count, and the claim TTL whose half bounds them. The rest are the defaults, which the guard
 * does not read.
 */
record DischargeRetrySettings(Duration dischargeTimeout, int dischargeRetries, Duration dischargeRetryDelay,
        Duration dischargeRetryMaxDelay, Duration dischargeRetryJitter, Duration claimTtl) implements ReaperConfig {

    /**
     * The longest timeout the claim allows (half its TTL), which no try of these tests comes near, so that every try
     * ends as the test answers it.
     */
    static DischargeRetrySettings retries(int retries, long delayMs, long maxDelayMs, long jitterMs, long claimTtlMs) {
        return new DischargeRetrySettings(Duration.ofMillis(claimTtlMs / 2), retries, Duration.ofMillis(delayMs),
                Duration.ofMillis(maxDelayMs), Duration.ofMillis(jitterMs), Duration.ofMillis(claimTtlMs));
    }

    @Override
    public boolean enabled() {
        return false;
    }

    @Override
    public Duration period() {
        return Duration.ofSeconds(1);
    }

    @Override
    public int batchSize() {
        return 256;
    }

    @Override
    public int maxAttempts() {
        return 5;
    }

    @Override
    public Duration retryBackoff() {
        return Duration.ofSeconds(5);
    }
}
