package io.handoff.benchmarks;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code concurrency} slots of work until stopped: each slot starts its next piece of work when its last one ends (a
 * closed loop, so the offered load is whatever the system under test can take). Work that completes while
 * {@link #recording} is on is counted; {@link #stop} lets the work in flight finish. With a ramp, the slots start
 * evenly spread over it instead of all at once: slots that keep their phase then keep arrivals even, where slots
 * started together would start and end in waves as long as the work lasts (thousands of paced streams).
 */
abstract class AbstractClosedLoop {

    private static final ScheduledExecutorService RAMP = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "closed-loop-ramp");
        t.setDaemon(true);
        return t;
    });

    private final int concurrency;
    private final Duration ramp;
    private final AtomicInteger active = new AtomicInteger();
    private final CountDownLatch drained = new CountDownLatch(1);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong completedTotal = new AtomicLong();
    private volatile boolean recording;
    private volatile boolean stopping;

    AbstractClosedLoop(int concurrency) {
        this(concurrency, Duration.ZERO);
    }

    AbstractClosedLoop(int concurrency, Duration ramp) {
        this.concurrency = concurrency;
        this.ramp = ramp;
    }

    /** Starts the first piece of work of a slot; the slot goes on through {@link #continuing}. */
    abstract void startSlot(int slot);

    final void start() {
        active.set(concurrency);
        for (int slot = 0; slot < concurrency; slot++) {
            long delayNanos = ramp.toNanos() / concurrency * slot;
            if (delayNanos == 0) {
                startSlot(slot);
            } else {
                int s = slot;
                // a slot that starts once stopping has begun gives itself up at once (continuing), so stop drains
                RAMP.schedule(() -> startSlot(s), delayNanos, TimeUnit.NANOSECONDS);
            }
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
