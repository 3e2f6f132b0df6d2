package io.handoff.gateway.routing;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Settings a {@link ProbeGuard} refuses before it builds anything, each with a message that names the setting.
 * A plain unit test: the refusal comes before SmallRye Fault Tolerance, which needs CDI, is reached.
 */
class ProbeGuardSettingsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final Duration DELAY = Duration.ofMillis(200);

    @Test
    void aNonPositiveTimeoutIsRefused() {
        assertEquals("handoff.discovery.probe-timeout must be positive, was PT0S",
                refusal(Duration.ZERO, 1, DELAY, Duration.ZERO));
    }

    @Test
    void negativeRetriesAreRefused() {
        assertEquals("handoff.discovery.probe-retries must be 0 or more, was -1",
                refusal(TIMEOUT, -1, DELAY, Duration.ZERO));
    }

    @Test
    void aNegativeDelayOrJitterIsRefused() {
        String message = "handoff.discovery.probe-retry-delay and probe-retry-jitter may not be negative";
        assertEquals(message, refusal(TIMEOUT, 1, Duration.ofMillis(-1), Duration.ZERO));
        assertEquals(message, refusal(TIMEOUT, 1, DELAY, Duration.ofMillis(-1)));
    }

    private static String refusal(Duration timeout, int retries, Duration delay, Duration jitter) {
        return assertThrows(IllegalArgumentException.class, () -> new ProbeGuard(timeout, retries, delay, jitter))
                .getMessage();
    }
}
