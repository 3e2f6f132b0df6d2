package io.handoff.gateway.session;

import io.handoff.gateway.session.TenantRateLimits.Charge;
import io.handoff.gateway.session.store.InMemoryRateLimitStore;
import io.handoff.gateway.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tenants' limits as configured (a tenant's own values over the default's), charged, corrected by usage and
 * given back, on the memory store with the clock moved by hand.
 */
class TenantRateLimitsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private TenantRateLimits limits(Limits defaults, Map<String, RateLimitConfig.Limits> tenants) {
        RateLimitConfig config = new RateLimitConfig() {
            public RateLimitConfig.Limits defaults() {
                return defaults;
            }

            public Map<String, RateLimitConfig.Limits> tenants() {
                return tenants;
            }
        };
        return new TenantRateLimits(config, new InMemoryRateLimitStore(), clock, registry);
    }

    private static Charge charge(TenantRateLimits limits, String tenant, long tokens) {
        return limits.charge(tenant, tokens).await().atMost(Duration.ofSeconds(5));
    }

    private static SessionException refusal(TenantRateLimits limits, String tenant, long tokens) {
        return assertThrows(SessionException.class, () -> charge(limits, tenant, tokens));
    }

    @Test
    void aTenantWithoutAnyRateIsNotLimitedAndCostsNoCharge() {
        TenantRateLimits limits = limits(new Limits(null, null, null, null), Map.of());
        assertFalse(limits.limits("anyone"));
        for (int i = 0; i < 1000; i++) {
            assertSame(Charge.NONE, charge(limits, "anyone", 1_000_000));
        }
    }

    @Test
    void aTenantsOwnValuesWinAndTheDefaultFillsTheRest() {
        TenantRateLimits limits = limits(new Limits(1d, null, 100d, null),
                Map.of("big", new Limits(5d, null, null, null)));
        charge(limits, "big", 100); // the default's tokens limit applies to it: now full, its requests not
        assertTrue(refusal(limits, "big", 1).getMessage().contains("100 tokens per second"));
        for (int i = 0; i < 4; i++) { // burst unset: one second's worth of its own rate
            charge(limits, "big", 0);
        }
        SessionException refused = refusal(limits, "big", 0);
        assertEquals(SessionFailure.RATE_LIMITED, refused.failure());
        assertEquals(Duration.ofMillis(200), refused.retryAfter().orElseThrow());

        charge(limits, "small", 0);
        assertEquals(Duration.ofSeconds(1), refusal(limits, "small", 0).retryAfter().orElseThrow());
        assertEquals(1, registry.counter("handoff.rate.limited", "tenant", "small", "limit", "requests").count());
        assertEquals(1, registry.counter("handoff.rate.limited", "tenant", "big", "limit", "tokens").count());
    }

    @Test
    void usageBelowTheChargeGivesTheRestBackAndAboveItChargesMore() {
        TenantRateLimits limits = limits(new Limits(null, null, 100d, 1000L), Map.of());
        Charge charged = charge(limits, "t", 1000);
        refusal(limits, "t", 1);

        limits.settle(charged, 400);
        charge(limits, "t", 600);
        refusal(limits, "t", 1);

        clock.advance(Duration.ofSeconds(10)); // empty again
        Charge small = charge(limits, "t", 100);
        limits.settle(small, 1100); // 1000 more than charged: waited out by what follows
        assertEquals(Duration.ofMillis(1010), refusal(limits, "t", 1).retryAfter().orElseThrow());
    }

    @Test
    void aRequestRefusedAfterItsChargeGetsBothBack() {
        TenantRateLimits limits = limits(new Limits(1d, 1L, 100d, 100L), Map.of());
        Charge charged = charge(limits, "t", 100);
        refusal(limits, "t", 0);

        limits.giveBack(charged);

        charge(limits, "t", 100);
    }

    @Test
    void aNonPositiveRateStopsTheGatewayNamingWhose() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> limits(new Limits(0d, null, null, null), Map.of()));
        assertTrue(e.getMessage().contains("default"), e.getMessage());
    }

    record Limits(Double requestRate, Long requests, Double tokenRate, Long tokens)
            implements RateLimitConfig.Limits {

        public OptionalDouble requestsPerSecond() {
            return requestRate == null ? OptionalDouble.empty() : OptionalDouble.of(requestRate);
        }

        public OptionalLong requestBurst() {
            return requests == null ? OptionalLong.empty() : OptionalLong.of(requests);
        }

        public OptionalDouble tokensPerSecond() {
            return tokenRate == null ? OptionalDouble.empty() : OptionalDouble.of(tokenRate);
        }

        public OptionalLong tokenBurst() {
            return tokens == null ? OptionalLong.empty() : OptionalLong.of(tokens);
        }
    }
}
