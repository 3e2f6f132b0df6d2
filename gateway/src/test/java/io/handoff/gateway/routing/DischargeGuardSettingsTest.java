package io.handoff.gateway.routing;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Settings a {@link DischargeGuard} refuses before it builds anything, each with a message that names the setting.
 * A plain unit test: the refusal comes before SmallRye Fault Tolerance, which needs CDI, is reached.
 */
class DischargeGuardSettingsTest {

    @Test
    void aMaxDelayNoLongerThanTheDelayIsRefused() {
        assertEquals("handoff.reaper.discharge-retry-max-delay (100 ms) must be longer than discharge-retry-delay"
                + " (100 ms)", refusal(DischargeRetrySettings.retries(2, 100, 100, 0, 30_000)));
    }

    @Test
    void aNegativeDelayOrJitterIsRefused() {
        String message = "handoff.reaper.discharge-retry-delay and discharge-retry-jitter may not be negative";
        assertEquals(message, refusal(DischargeRetrySettings.retries(2, -1, 1_000, 0, 30_000)));
        assertEquals(message, refusal(DischargeRetrySettings.retries(2, 100, 1_000, -1, 30_000)));
    }

    @Test
    void aDelayNotShorterThanHalfTheClaimTtlIsRefused() {
        assertEquals("handoff.reaper.discharge-retry-delay (200 ms) must be shorter than half of"
                + " handoff.reaper.claim-ttl (200 ms), which bounds the immediate retries",
                refusal(DischargeRetrySettings.retries(2, 200, 1_000, 0, 400)));
    }

    @Test
    void aMaxDelayNotShorterThanHalfTheClaimTtlIsRefused() {
        // SmallRye refuses it as well, but only at the guard's first call, which it then fails
        assertEquals("handoff.reaper.discharge-retry-max-delay (1000 ms) must be shorter than half of"
                + " handoff.reaper.claim-ttl (1000 ms), which bounds the immediate retries",
                refusal(DischargeRetrySettings.retries(2, 100, 1_000, 0, 2_000)));
    }

    @Test
    void aTimeoutLongerThanHalfTheClaimTtlIsRefused() {
        // the last try may start as the retries' half of the claim ends; it must end before the claim does (half
        // exactly is accepted: DischargeRetrySettings.retries gives every guard of DischargeGuardBackoffTest that)
        assertEquals("handoff.reaper.discharge-timeout (1501 ms) must be at most half of handoff.reaper.claim-ttl"
                + " (1500 ms): every try must end before the claim runs out and another replica may discharge the"
                + " same KV again", refusal(new DischargeRetrySettings(Duration.ofMillis(1_501), 2,
                        Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(3))));
    }

    @Test
    void negativeRetriesOrANonPositiveTimeoutAreRefused() {
        assertEquals("handoff.reaper.discharge-retries must be 0 or more, was -1",
                refusal(DischargeRetrySettings.retries(-1, 100, 1_000, 0, 30_000)));
        assertEquals("handoff.reaper.discharge-timeout must be positive, was PT0S", refusal(
                new DischargeRetrySettings(Duration.ZERO, 2, Duration.ofMillis(100), Duration.ofSeconds(1),
                        Duration.ZERO, Duration.ofSeconds(30))));
    }

    private static String refusal(DischargeRetrySettings settings) {
        return assertThrows(IllegalArgumentException.class, () -> new DischargeGuard(settings)).getMessage();
    }
}
