package io.handoff.gateway.testing;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that moves only when a test moves it. Also the Clock bean of every Quarkus test, so expiry tests
 * advance time instead of sleeping.
 */
@Alternative
@Priority(1)
@Singleton
public class MutableClock extends Clock {

    private volatile Instant now;

    public MutableClock() {
        this(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
    }

    public MutableClock(Instant start) {
        this.now = start;
    }

    public void advance(Duration by) {
        now = now.plus(by);
    }

    public void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
