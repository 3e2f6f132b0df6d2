package io.handoff.benchmarks;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code concurrency} slots of work until stopped: each slot starts its next piece of work when its last one ends (a
 * closed loop, so the offered load is whatever the system under test can take). Work that completes while
 * {@link #recording} is on is counted; {@link #stop} lets the work in flight finish.
 */
abstract class AbstractClosedLoop {

    private final int concurrency;
    private final AtomicInteger active = new AtomicInteger();
    private final CountDownLatch drained = new CountDownLatch(1);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong completedTotal = new AtomicLong();
    private volatile boolean recording;
    private volatile boolean stopping;

    AbstractClosedLoop(int concurrency) {
        this.concurrency = concurrency;
    }

    /** Starts the first piece of work of a slot; the slot goes on through {@link #continuing}. */
    abstract void startSlot(int slot);

    final void start() {
        active.set(concurrency);
        for (int slot = 0; slot < concurrency; slot++) {
            startSlot(slot);
        }
    }

    final void recording(boolean on) {
        recording = on;
    }

    final boolean recording() {
        return recording;
    }

    final long completedWhileRecording() {
        return completed.get();
    }

    final long completedTotal() {
        return completedTotal.get();
    }

    /** Lets each piece of work in flight finish and starts no new one; answers whether all finished in time. */
    final boolean stop(Duration wait) throws InterruptedException {
        stopping = true;
        return drained.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Whether a slot whose work ended starts more: not once stopping, when the slot is given up instead. */
    final boolean continuing() {
        if (stopping) {
            if (active.decrementAndGet() == 0) {
                drained.countDown();
            }
            return false;
        }
        return true;
    }

    /** Counts a piece of work that completed; answers whether it completed while recording. */
    final boolean countCompleted() {
        completedTotal.incrementAndGet();
        if (recording) {
            completed.incrementAndGet();
            return true;
        }
        return false;
    }
}
