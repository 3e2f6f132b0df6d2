package io.handoff.connector.testsupport;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that moves only when a test moves it, so that tests of holds, leases and deadlines advance time instead
 * of sleeping. Give it to a connector as its {@code ConnectorContext.clock()}.
 */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;

    /** Starts at the current instant, for tests that compare with times engines report from the real clock. */
    public ManualClock() {
        this(Instant.now());
    }

    public ManualClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    public void advance(Duration by) {
        now.updateAndGet(t -> t.plus(by));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** The same clock: a zone changes nothing about the instant, and a copy would not move with this one. */
    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
