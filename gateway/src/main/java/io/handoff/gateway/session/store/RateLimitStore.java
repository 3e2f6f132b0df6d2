package io.handoff.gateway.session.store;

import io.smallrye.mutiny.Uni;

import java.time.Instant;
import java.util.List;

/**
 * Where the tenants' rate limits are kept: in Redis, shared by every replica (one script per decision, every limit
 * of a tenant in the tenant's Cluster slot), or in this JVM. Time is the caller's, from the injected clock, so that
 * tests move it; Redis's own TIME is not used.
 */
public interface RateLimitStore {

    /**
     * Takes every charge, or none: when one limit would be exceeded nothing is taken and the verdict names the limit
     * that waits longest and how long. A store that cannot be reached fails with STORE_UNAVAILABLE.
     */
    Uni<RateVerdict> take(String tenant, List<RateCharge> charges, Instant now);

    /**
     * Corrects earlier charges, never refused: a positive cost charges more (usage beyond what was charged), a
     * negative one gives back (usage below it, or a request refused after it was charged).
     */
    Uni<Void> adjust(String tenant, List<RateCharge> corrections, Instant now);
}
