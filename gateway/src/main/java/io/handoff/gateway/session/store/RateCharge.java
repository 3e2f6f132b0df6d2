package io.handoff.gateway.session.store;

/** {@code cost} units charged against one limit (negative: given back, as a correction by actual usage does). */
public record RateCharge(RateLimit limit, long cost) {
}
