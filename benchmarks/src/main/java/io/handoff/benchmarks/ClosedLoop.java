package io.handoff.benchmarks;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * {@code concurrency} requests in flight until stopped: each slot sends its next request when its last one ends
 * (a closed loop, so the offered load is whatever the system under test can take). The tally of each request is
 * chosen as it starts: always the same one for a load phase, turn by turn for the interleaved one-in-flight phase.
 * Requests that end while {@link #recording} is on are recorded and counted.
 */
final class ClosedLoop {

    /** Unique across the run's phases and targets: the gateway refuses a request id that is still live. */
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final int concurrency;
    private final Supplier<Tally> chooser;
    private final String promptBase;
    private final AtomicInteger active = new AtomicInteger();
    private final CountDownLatch drained = new CountDownLatch(1);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong completedTotal = new AtomicLong();
    private volatile boolean recording;
    private volatile boolean stopping;

    ClosedLoop(int concurrency, Supplier<Tally> chooser, String promptBase) {
        this.concurrency = concurrency;
        this.chooser = chooser;
        this.promptBase = promptBase;
    }

    void start() {
        active.set(concurrency);
        for (int slot = 0; slot < concurrency; slot++) {
            next();
        }
    }

    void recording(boolean on) {
        recording = on;
    }

    long completedWhileRecording() {
        return completed.get();
    }

    long completedTotal() {
        return completedTotal.get();
    }

    /** Lets each in-flight request finish and starts no new one; answers whether all finished in time. */
    boolean stop(Duration wait) throws InterruptedException {
        stopping = true;
        return drained.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void next() {
        if (stopping) {
            if (active.decrementAndGet() == 0) {
                drained.countDown();
            }
            return;
        }
        Tally tally = chooser.get();
        long n = SEQUENCE.incrementAndGet();
        InFlight request = new InFlight(tally);
        try {
            // the sequence number makes every prompt distinct, the same text for every target
            tally.target.send("bench-" + RUN + "-" + n, promptBase + " (request " + n + ")", request);
        } catch (RuntimeException e) {
            request.failed("send", e);
        }
    }

    /** One request: its start, its first token and its single ending. */
    private final class InFlight implements Target.Listener {
        private final Tally tally;
        private final long start = System.nanoTime();
        private volatile long firstToken;
        private final AtomicBoolean ended = new AtomicBoolean();

        InFlight(Tally tally) {
            this.tally = tally;
        }

        @Override
        public void firstToken() {
            if (firstToken == 0) {
                firstToken = System.nanoTime();
            }
        }

        @Override
        public void completed() {
            long end = System.nanoTime();
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            completedTotal.incrementAndGet();
            tally.ended.incrementAndGet();
            if (recording) {
                tally.ttft.record(firstToken - start);
                tally.total.record(end - start);
                completed.incrementAndGet();
            }
            next();
        }

        @Override
        public void failed(String operation, Throwable cause) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            tally.errors.add(operation, cause);
            tally.ended.incrementAndGet();
            next();
        }
    }
}
