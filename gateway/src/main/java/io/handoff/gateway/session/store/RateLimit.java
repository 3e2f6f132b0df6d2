package io.handoff.gateway.session.store;

/**
 * One limit of a tenant: on average {@code perSecond} units a second, up to {@code burst} units at once. A unit is a
 * request or a token, as the limit's {@code name} says ({@code requests}, {@code tokens}).
 */
public record RateLimit(String name, double perSecond, long burst) {

    public RateLimit {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("rate limit " + name + ": a rate must be a positive number, not "
                    + perSecond);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("rate limit " + name + ": a burst must be at least 1, not " + burst);
        }
    }

    /** Microseconds one unit occupies: the GCRA's emission interval. */
    double intervalMicros() {
        return 1_000_000d / perSecond;
    }
}
