package io.handoff.gateway.session.store;

import java.time.Duration;

/**
 * What a tenant's limits answered: allowed (every charge was taken), or refused with the limit that refused and how
 * long until the same charges would fit (nothing was taken).
 */
public record RateVerdict(boolean allowed, String limit, Duration retryAfter) {

    public static final RateVerdict ALLOWED = new RateVerdict(true, "", Duration.ZERO);

    static RateVerdict limited(String limit, long retryAfterMicros) {
        return new RateVerdict(false, limit, Duration.ofNanos(Math.multiplyExact(Math.max(1, retryAfterMicros), 1000)));
    }
}
