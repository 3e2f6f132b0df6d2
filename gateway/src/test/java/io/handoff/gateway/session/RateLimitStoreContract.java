package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RateCharge;
import io.handoff.gateway.session.store.RateLimit;
import io.handoff.gateway.session.store.RateLimitStore;
import io.handoff.gateway.session.store.RateVerdict;
import io.handoff.gateway.testing.MutableClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every rate-limit store does, GCRA's arithmetic included, with time moved by a clock and never slept: a
 * burst passes at once, then the steady rate, and a refusal says how long until the same charge fits.
 */
abstract class RateLimitStoreContract {

    static final RateLimit REQUESTS = new RateLimit("requests", 2, 3); // 500 ms a request, 3 at once
    static final RateLimit TOKENS = new RateLimit("tokens", 100, 1000); // 10 ms a token, 1000 at once

    protected final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    protected RateLimitStore store;
    protected String tenant;

    /** A fresh store, empty for the tenants of this test. */
    protected abstract RateLimitStore newStore();

    @BeforeEach
    void setUp() {
        store = newStore();
        tenant = "t-" + UUID.randomUUID();
    }

    @Test
    void aBurstPassesAtOnceAndTheNextWaitsOneInterval() {
        for (int i = 0; i < 3; i++) {
            assertTrue(take(store, requests(1)).allowed(), "request " + i + " of the burst");
        }
        RateVerdict fourth = take(store, requests(1));

        assertFalse(fourth.allowed());
        assertEquals("requests", fourth.limit());
        assertEquals(Duration.ofMillis(500), fourth.retryAfter());
    }

    @Test
    void theSteadyRateIsOneRequestPerIntervalAndTheRetryAfterIsExact() {
        for (int i = 0; i < 3; i++) {
            take(store, requests(1));
        }
        clock.advance(Duration.ofMillis(499));
        assertEquals(Duration.ofMillis(1), take(store, requests(1)).retryAfter());
        clock.advance(Duration.ofMillis(1));
        assertTrue(take(store, requests(1)).allowed());
        assertFalse(take(store, requests(1)).allowed());
        clock.advance(Duration.ofMillis(500));
        assertTrue(take(store, requests(1)).allowed());
    }

    @Test
    void aRefusedTakeTakesNothingOfAnyLimit() {
        assertTrue(take(store, List.of(new RateCharge(REQUESTS, 1), new RateCharge(TOKENS, 900))).allowed());
        RateVerdict refused = take(store, List.of(new RateCharge(REQUESTS, 1), new RateCharge(TOKENS, 200)));

        assertFalse(refused.allowed());
        assertEquals("tokens", refused.limit());
        assertEquals(Duration.ofMillis(1000), refused.retryAfter()); // 100 tokens over, 10 ms each
        // the refused request took no request either: two more still fit in the burst of three
        assertTrue(take(store, requests(1)).allowed());
        assertTrue(take(store, requests(1)).allowed());
        assertFalse(take(store, requests(1)).allowed());
    }

    @Test
    void aCorrectionGivesBackWhatUsageDidNotSpendAndChargesWhatItSpentMore() {
        assertTrue(take(store, tokens(1000)).allowed());
        assertFalse(take(store, tokens(1)).allowed());

        adjust(store, tokens(-400)); // the request used 600 of the 1000 it was charged
        assertTrue(take(store, tokens(400)).allowed());
        assertFalse(take(store, tokens(1)).allowed());

        adjust(store, tokens(50)); // usage 50 beyond the charge: the debt is waited out, never refused
        assertEquals(Duration.ofMillis(510), take(store, tokens(1)).retryAfter());
    }

    @Test
    void aChargeLargerThanTheBurstPassesOnlyWhenTheLimitIsEmptyAndLeavesItsDebt() {
        assertTrue(take(store, tokens(1500)).allowed());
        RateVerdict next = take(store, tokens(1));
        assertFalse(next.allowed());
        assertEquals(Duration.ofMillis(5010), next.retryAfter()); // 500 tokens of debt, then the one token

        clock.advance(Duration.ofSeconds(15));
        assertTrue(take(store, tokens(1000)).allowed());
        assertFalse(take(store, tokens(1500)).allowed(), "not empty: 1000 tokens still to drain");
    }

    @Test
    void givingBackNeverMakesRoomBeyondTheBurst() {
        adjust(store, tokens(-5000));
        for (int i = 0; i < 3; i++) {
            assertTrue(take(store, requests(1)).allowed());
        }
        assertTrue(take(store, tokens(1000)).allowed());
        assertFalse(take(store, tokens(1)).allowed());
    }

    @Test
    void tenantsHaveTheirOwnLimits() {
        for (int i = 0; i < 3; i++) {
            take(store, requests(1));
        }
        assertFalse(take(store, requests(1)).allowed());
        assertTrue(store.take(tenant + "-other", requests(1), clock.instant()).await().indefinitely().allowed());
    }

    protected RateVerdict take(RateLimitStore on, List<RateCharge> charges) {
        return on.take(tenant, charges, clock.instant()).await().atMost(Duration.ofSeconds(5));
    }

    protected void adjust(RateLimitStore on, List<RateCharge> charges) {
        on.adjust(tenant, charges, clock.instant()).await().atMost(Duration.ofSeconds(5));
    }

    protected static List<RateCharge> requests(long n) {
        return List.of(new RateCharge(REQUESTS, n));
    }

    protected static List<RateCharge> tokens(long n) {
        return List.of(new RateCharge(TOKENS, n));
    }
}
