package io.handoff.connector.openengine;

import io.handoff.simulator.SimClock;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** The gateway's clock in tests: reads the simulators' clock, so moving it moves both sides' time. */
final class SimClockAdapter extends Clock {
    private final SimClock clock;

    SimClockAdapter(SimClock clock) {
        this.clock = clock;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(clock.millis());
    }
}
