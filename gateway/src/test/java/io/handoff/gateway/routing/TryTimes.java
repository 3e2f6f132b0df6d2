package io.handoff.gateway.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * When each try of one guarded call started, on {@link System#nanoTime()}, the clock SmallRye's retry waits run on:
 * the waits between tries are read from it, as lower bounds only (a busy machine makes a wait longer, never shorter).
 */
final class TryTimes {

    private final List<Long> starts = new ArrayList<>();

    /** Notes that a try starts now; returns how many tries have started, this one included. */
    synchronized int started() {
        starts.add(System.nanoTime());
        return starts.size();
    }

    synchronized int tries() {
        return starts.size();
    }

    /** The wait before each retry, in order: from one try's start to the next's, in whole milliseconds rounded down. */
    synchronized List<Long> gapsMs() {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < starts.size(); i++) {
            gaps.add(TimeUnit.NANOSECONDS.toMillis(starts.get(i) - starts.get(i - 1)));
        }
        return gaps;
    }

    @Override
    public synchronized String toString() {
        return tries() + " tries, waits " + gapsMs() + " ms";
    }
}
