package io.handoff.benchmarks;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * {@code concurrency} requests in flight until stopped, each slot sending its next request when its last one ends.
 * The tally of each request is chosen as it starts: always the same one for a load phase, turn by turn for the
 * interleaved one-in-flight phase. Requests that end while {@link #recording} is on are recorded and counted.
 */
final class ClosedLoop extends AbstractClosedLoop {

    /** Unique across the run's phases and targets: the gateway refuses a request id that is still live. */
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final Supplier<Tally> chooser;
    private final LongFunction<String> prompts;

    ClosedLoop(int concurrency, Supplier<Tally> chooser, String promptBase) {
        this(concurrency, Duration.ZERO, chooser, numbered(promptBase));
    }

    /** @param prompts the prompt of each request, by its number (unique across the run) */
    ClosedLoop(int concurrency, Duration ramp, Supplier<Tally> chooser, LongFunction<String> prompts) {
        super(concurrency, ramp);
        this.chooser = chooser;
        this.prompts = prompts;
    }

    /** The base with the request number appended, which makes every prompt distinct. */
    static LongFunction<String> numbered(String promptBase) {
        return n -> promptBase + " (request " + n + ")";
    }

    @Override
    void startSlot(int slot) {
        next();
    }

    private void next() {
        if (!continuing()) {
            return;
        }
        Tally tally = chooser.get();
        long n = SEQUENCE.incrementAndGet();
        InFlight request = new InFlight(tally);
        try {
            tally.target.send("bench-" + RUN + "-" + n, prompts.apply(n), request);
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
            boolean recorded = countCompleted();
            tally.ended.incrementAndGet();
            if (recorded) {
                tally.recorded(start, firstToken, end);
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
