package io.handoff.gateway.session.store;

import java.time.Duration;

/**
 * What a store needs to know of policy to keep its own bookkeeping right.
 *
 * @param tombstoneRetention how long a terminal session stays queryable (and its idempotency key answered)
 * @param maxLivePerTenant   the live-session quota of one tenant
 */
public record StoreSettings(Duration tombstoneRetention, int maxLivePerTenant) {
}
