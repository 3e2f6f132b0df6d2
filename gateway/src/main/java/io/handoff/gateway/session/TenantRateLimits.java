package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RateCharge;
import io.handoff.gateway.session.store.RateLimit;
import io.handoff.gateway.session.store.RateLimitStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each tenant's rate limits (requests and tokens per second, {@link RateLimitConfig}), charged at admission in one
 * step of the {@link RateLimitStore}: a request over either limit is refused RATE_LIMITED with the wait until it
 * fits, and is charged nothing. A tenant with no limit configured costs no store call at all.
 *
 * <p>Tokens are charged as the request asks (prompt tokens plus max_tokens), then corrected by the usage the
 * engines report when it ends ({@link #settle}); a request refused after it was charged gets its charge back
 * ({@link #giveBack}). Corrections are best effort: one the store does not take leaves the original charge, which
 * only errs toward the limit.
 */
public class TenantRateLimits {

    /** Limits as metrics and refusals name them. */
    public static final String REQUESTS = "requests";
    public static final String TOKENS = "tokens";

    /** No tenant limited: what a service built without limits (tests, tools) uses. */
    public static final TenantRateLimits NONE = new TenantRateLimits();

    private static final Logger LOG = Logger.getLogger(TenantRateLimits.class);

    private final RateLimitStore store;
    private final Clock clock;
    private final MeterRegistry registry;
    private final Limits defaults;
    private final Map<String, Limits> byTenant = new HashMap<>();
    private final Map<String, Counter> refusals = new ConcurrentHashMap<>();

    public TenantRateLimits(RateLimitConfig config, RateLimitStore store, Clock clock, MeterRegistry registry) {
        this.store = store;
        this.clock = clock;
        this.registry = registry;
        this.defaults = Limits.of(config.defaults(), null, "default");
        config.tenants().forEach((tenant, own) -> byTenant.put(tenant, Limits.of(own, config.defaults(), tenant)));
    }

    private TenantRateLimits() {
        this.store = null;
        this.clock = null;
        this.registry = null;
        this.defaults = new Limits(null, null);
    }

    /** Whether any limit applies to the tenant: when none does, {@link #charge} answers at once. */
    public boolean limits(String tenant) {
        return !limitsOf(tenant).isEmpty();
    }

    /**
     * Charges one request and {@code tokens} tokens to the tenant, or fails with RATE_LIMITED (nothing charged).
     * A tokens limit is charged only when {@code tokens} is positive.
     */
    public Uni<Charge> charge(String tenant, long tokens) {
        Limits limits = limitsOf(tenant);
        if (limits.isEmpty()) {
            return Uni.createFrom().item(Charge.NONE);
        }
        List<RateCharge> charges = new ArrayList<>(2);
        if (limits.requests() != null) {
            charges.add(new RateCharge(limits.requests(), 1));
        }
        long chargedTokens = limits.tokens() != null && tokens > 0 ? tokens : 0;
        if (chargedTokens > 0) {
            charges.add(new RateCharge(limits.tokens(), chargedTokens));
        }
        if (charges.isEmpty()) {
            return Uni.createFrom().item(Charge.NONE);
        }
        return store.take(tenant, charges, clock.instant()).map(verdict -> {
            if (!verdict.allowed()) {
                refused(tenant, verdict.limit());
                throw SessionException.rateLimited("tenant " + tenant + " is at its limit of " + describe(limits,
                        verdict.limit()) + "; retry after " + ceilMillis(verdict.retryAfter()) + " ms",
                        verdict.retryAfter());
            }
            return new Charge(tenant, limits, limits.requests() != null, chargedTokens);
        });
    }

    /**
     * Corrects the tokens charged by the usage the engines reported (prompt plus completion tokens): what the
     * request did not spend goes back, what it spent beyond the charge is charged (never refused).
     */
    public void settle(Charge charge, long usedTokens) {
        if (charge.tokens() == 0 || usedTokens == charge.tokens()) {
            return;
        }
        adjust(charge, List.of(new RateCharge(charge.limits().tokens(), usedTokens - charge.tokens())));
    }

    /** A request refused after it was charged: its request and tokens go back. */
    public void giveBack(Charge charge) {
        List<RateCharge> back = new ArrayList<>(2);
        if (charge.request()) {
            back.add(new RateCharge(charge.limits().requests(), -1));
        }
        if (charge.tokens() > 0) {
            back.add(new RateCharge(charge.limits().tokens(), -charge.tokens()));
        }
        if (!back.isEmpty()) {
            adjust(charge, back);
        }
    }

    private void adjust(Charge charge, List<RateCharge> corrections) {
        store.adjust(charge.tenant(), corrections, clock.instant()).subscribe().with(done -> {
        }, failure -> LOG.debugf("rate-limit correction for tenant %s not stored: %s", charge.tenant(),
                failure.getMessage()));
    }

    private void refused(String tenant, String limit) {
        refusals.computeIfAbsent(tenant + '\u0000' + limit, k -> Counter.builder("handoff.rate.limited")
                .description("Requests refused by a tenant's rate limit").tags("tenant", tenant, "limit", limit)
                .register(registry)).increment();
    }

    private Limits limitsOf(String tenant) {
        return byTenant.getOrDefault(tenant, defaults);
    }

    private static String describe(Limits limits, String limit) {
        RateLimit l = REQUESTS.equals(limit) ? limits.requests() : limits.tokens();
        return rate(l.perSecond()) + " " + limit + " per second (burst " + l.burst() + ")";
    }

    private static String rate(double perSecond) {
        return perSecond == Math.rint(perSecond) ? Long.toString((long) perSecond) : Double.toString(perSecond);
    }

    /** What admission charged a request, to correct or give back later. */
    public record Charge(String tenant, Limits limits, boolean request, long tokens) {
        public static final Charge NONE = new Charge("", new Limits(null, null), false, 0);
    }

    /** One tenant's limits; null where none applies. */
    public record Limits(RateLimit requests, RateLimit tokens) {

        boolean isEmpty() {
            return requests == null && tokens == null;
        }

        /** A tenant's own values over the default's ({@code fallback}, null for the default itself). */
        static Limits of(RateLimitConfig.Limits own, RateLimitConfig.Limits fallback, String whose) {
            return new Limits(
                    limit(REQUESTS, or(own.requestsPerSecond(), fallback == null ? null : fallback.requestsPerSecond()),
                            or(own.requestBurst(), fallback == null ? null : fallback.requestBurst()), whose),
                    limit(TOKENS, or(own.tokensPerSecond(), fallback == null ? null : fallback.tokensPerSecond()),
                            or(own.tokenBurst(), fallback == null ? null : fallback.tokenBurst()), whose));
        }

        private static RateLimit limit(String name, OptionalDouble rate, OptionalLong burst, String whose) {
            if (rate.isEmpty()) {
                return null;
            }
            try {
                return new RateLimit(name, rate.getAsDouble(),
                        burst.orElse(Math.max(1, (long) Math.ceil(rate.getAsDouble()))));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("handoff.rate-limits of " + whose + ": " + e.getMessage(), e);
            }
        }

        private static OptionalDouble or(OptionalDouble own, OptionalDouble fallback) {
            return own.isPresent() || fallback == null ? own : fallback;
        }

        private static OptionalLong or(OptionalLong own, OptionalLong fallback) {
            return own.isPresent() || fallback == null ? own : fallback;
        }
    }

    private static long ceilMillis(Duration d) {
        return (d.toNanos() + 999_999) / 1_000_000;
    }
}
