package io.handoff.simulator;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The time source every hold and expiry decision reads. It is a base {@link Clock} plus an offset that only grows:
 * tests move time forward with {@link #advance(Duration)} instead of sleeping. Engines register a listener so that an
 * advance makes them sweep their holds at once; Vert.x timers remain the wake-up mechanism in real time.
 *
 * <p>One clock may be shared by several engines (a fleet), so that one advance expires holds everywhere.
 */
public final class SimClock {
    private final Clock base;
    private final AtomicLong offsetMs = new AtomicLong();
    private final List<Runnable> advanceListeners = new CopyOnWriteArrayList<>();

    public SimClock() {
        this(Clock.systemUTC());
    }

    public SimClock(Clock base) {
        this.base = base;
    }

    /** Current simulated time in epoch milliseconds. */
    public long millis() {
        return base.millis() + offsetMs.get();
    }

    /** How far this clock has been moved ahead of its base. */
    public long offsetMillis() {
        return offsetMs.get();
    }

    /** Moves time forward (never backward) and notifies the engines so that they sweep expired holds. */
    public void advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("the clock never goes back");
        }
        offsetMs.addAndGet(d.toMillis());
        for (Runnable r : advanceListeners) {
            r.run();
        }
    }

    /**
     * This simulated time as a {@link Clock} (in UTC), for code under test that must see the engines' time: a
     * connector whose holds end when the engines' do.
     */
    public Clock asClock() {
        return new Clock() {
            @Override
            public long millis() {
                return SimClock.this.millis();
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(SimClock.this.millis());
            }

            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }
        };
    }

    public void addAdvanceListener(Runnable r) {
        advanceListeners.add(r);
    }

    public void removeAdvanceListener(Runnable r) {
        advanceListeners.remove(r);
    }
}
