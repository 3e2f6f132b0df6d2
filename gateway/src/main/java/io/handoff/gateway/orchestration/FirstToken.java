package io.handoff.gateway.orchestration;

import io.micrometer.core.instrument.Timer;

import java.util.concurrent.TimeUnit;

/**
 * One request's wait for its first token, from the call's arrival (admission, the session's allocation and the
 * prefill included: what the client waits for) to the first token the relay passes on. Recorded once; used by the one
 * relay of its request, so unsynchronized.
 */
final class FirstToken {

    /** For a relay whose first token nobody times (a participant's prefill leg has none). */
    static final FirstToken UNTIMED = new FirstToken(null, 0);

    private final Timer timer;
    private final long arrivedNanos;
    private boolean recorded;

    /**
     * @param arrivedNanos {@link System#nanoTime()} when the call arrived
     */
    FirstToken(Timer timer, long arrivedNanos) {
        this.timer = timer;
        this.arrivedNanos = arrivedNanos;
    }

    /** A token reached the client: the first one ends the wait. */
    void tokenRelayed() {
        if (!recorded && timer != null) {
            recorded = true;
            timer.record(System.nanoTime() - arrivedNanos, TimeUnit.NANOSECONDS);
        }
    }
}
