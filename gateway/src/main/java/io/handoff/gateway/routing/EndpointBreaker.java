package io.handoff.gateway.routing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * One endpoint's circuit breaker, on the injected clock. Closed, it counts consecutive failures; at the threshold it
 * opens and the pool skips the endpoint. Once the open period has passed, the breaker asks for one probe through the
 * connector's discovery surface; only a healthy probe closes it again, so traffic never rediscovers a dead endpoint.
 */
public final class EndpointBreaker {

    public enum State { CLOSED, OPEN, PROBING }

    private final Clock clock;
    private final int threshold;
    private final Duration openFor;
    private State state = State.CLOSED;
    private int consecutiveFailures;
    private Instant openUntil = Instant.MIN;
    private String lastFailure = "";

    public EndpointBreaker(Clock clock, int threshold, Duration openFor) {
        this.clock = clock;
        this.threshold = threshold;
        this.openFor = openFor;
    }

    public synchronized boolean admits() {
        return state == State.CLOSED;
    }

    /** Whether the open period has passed and nobody probes yet: the caller who gets true runs the probe. */
    public synchronized boolean takeProbe() {
        if (state == State.OPEN && !clock.instant().isBefore(openUntil)) {
            state = State.PROBING;
            return true;
        }
        return false;
    }

    public synchronized void succeeded() {
        if (state == State.CLOSED) {
            consecutiveFailures = 0;
        }
    }

    public synchronized void failed(String why) {
        lastFailure = why;
        if (state == State.CLOSED && ++consecutiveFailures >= threshold) {
            open();
        }
    }

    /** Marks the endpoint down at once, e.g. when it answers as the wrong role. */
    public synchronized void trip(String why) {
        lastFailure = why;
        open();
    }

    public synchronized void probed(boolean healthy, String detail) {
        if (healthy) {
            state = State.CLOSED;
            consecutiveFailures = 0;
        } else {
            lastFailure = detail;
            open();
        }
    }

    public synchronized State state() {
        return state;
    }

    public synchronized String lastFailure() {
        return lastFailure;
    }

    private void open() {
        state = State.OPEN;
        consecutiveFailures = 0;
        openUntil = clock.instant().plus(openFor);
    }
}
