package io.handoff.gateway.session.store;

import io.smallrye.mutiny.Uni;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rate limits of this JVM only (one replica), the memory store's twin of {@code rate_limit.lua}: one TAT per tenant
 * and limit, every decision O(1) under one lock. An entry a decision finds passed is dropped (an empty limit is
 * the same as none); tenants are the configured ones, so the map stays as small as their number.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

    private final Map<String, Double> tats = new HashMap<>();

    @Override
    public Uni<RateVerdict> take(String tenant, List<RateCharge> charges, Instant now) {
        return Uni.createFrom().item(() -> decide(tenant, charges, Gcra.micros(now), true));
    }

    @Override
    public Uni<Void> adjust(String tenant, List<RateCharge> corrections, Instant now) {
        return Uni.createFrom().item(() -> decide(tenant, corrections, Gcra.micros(now), false)).replaceWithVoid();
    }

    private synchronized RateVerdict decide(String tenant, List<RateCharge> charges, long now, boolean refusable) {
        double[] next = new double[charges.size()];
        long longest = 0;
        String refusing = null;
        for (int i = 0; i < charges.size(); i++) {
            RateCharge c = charges.get(i);
            next[i] = Gcra.charged(tats.getOrDefault(key(tenant, c), 0d), now, c);
            long wait = refusable ? Gcra.waitMicros(next[i], now, c) : 0;
            if (wait > longest) {
                longest = wait;
                refusing = c.limit().name();
            }
        }
        if (refusing != null) {
            return RateVerdict.limited(refusing, longest);
        }
        for (int i = 0; i < charges.size(); i++) {
            String key = key(tenant, charges.get(i));
            if (next[i] > now) {
                tats.put(key, next[i]);
            } else {
                tats.remove(key);
            }
        }
        return RateVerdict.ALLOWED;
    }

    private static String key(String tenant, RateCharge charge) {
        return tenant + '\u0000' + charge.limit().name();
    }
}
