package io.handoff.gateway.orchestration;

import io.handoff.gateway.orchestration.AdmissionMetrics.Outcome;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Vertx;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The waiting room of one route. When the route has no slot (its bulkhead full, or every endpoint of a pool at its
 * limit) a Generate waits here instead of being refused, in arrival order, for at most the route's
 * {@code queue.timeout}; a full queue refuses at once. A waiting request has taken nothing: no bulkhead place, no
 * endpoint, no request id, no session, no engine; it takes them only when its turn comes and they are free.
 *
 * <p>Fairness: only the head of the queue is tried, and a newcomer that finds anyone waiting queues behind them, so
 * no request overtakes one that waits. The head is tried when one of the route's requests gives back what it took,
 * when a request joins the queue (what it lacked may have freed meanwhile), and on every tick of a timer that runs
 * while anyone waits (a slot that frees otherwise, a breaker that closes, is found within a tick).
 *
 * <p>Time: deadlines are read from the injected clock, so tests move it instead of sleeping; the timer that looks at
 * them is a Vert.x periodic timer of {@link #TICK}, so a wait ends at most one tick after its deadline, never before.
 * A timer per waiter at its deadline would be exact, but a clock that tests move cannot make a Vert.x timer fire.
 */
final class AdmissionQueue {

    /** How often, while any request waits, the deadlines are looked at and the head is tried. */
    static final Duration TICK = Duration.ofMillis(100);

    private final String route;
    private final int maxWaiting;
    private final Duration timeout;
    private final Clock clock;
    private final Vertx vertx;
    private final AdmissionMetrics metrics;

    /** Guarded by this. */
    private final Deque<Waiter> waiting = new ArrayDeque<>();
    /** Guarded by this; -1 while nobody waits. */
    private long timer = -1;
    /** The size of {@link #waiting}, readable without the lock. */
    private final AtomicInteger depth = new AtomicInteger();
    /** Passes of {@link #drain} asked for: one thread drains at a time, and runs again for those asked meanwhile. */
    private final AtomicInteger drains = new AtomicInteger();

    private final Supplier<Number> depthReading;

    AdmissionQueue(String route, int maxWaiting, Duration timeout, Clock clock, Vertx vertx,
            AdmissionMetrics metrics) {
        this.route = route;
        this.maxWaiting = maxWaiting;
        this.timeout = timeout;
        this.clock = clock;
        this.vertx = vertx;
        this.metrics = metrics;
        this.depthReading = depth::get;
        metrics.depth(route, depthReading);
    }

    /** The queue's route no longer serves: the route's gauge stops counting this queue. */
    void forgotten() {
        metrics.forget(route, depthReading);
    }

    /** Whether anyone waits: a newcomer then queues behind them rather than try for a slot first. */
    boolean anyWaiting() {
        return depth.get() > 0;
    }

    int depth() {
        return depth.get();
    }

    /**
     * Waits in the queue for a slot. The request's turn comes when everyone before it was admitted or left; then
     * {@code attempt} runs (under the queue's lock, so that one request at a time takes slots): a refusal that
     * {@link GenerateRefusal#awaitsSlot awaits a slot} keeps the request at the head, any other refusal ends its wait
     * with that refusal. A request still waiting at its deadline is refused OVERLOADED, with how long it waited.
     * Cancelling the wait leaves the queue at once.
     *
     * @param attempt takes what the request needs and returns its run, or throws, having given back what it took
     * @param why     why the request could not be admitted when it came, for the timeout's message; null when it
     *                queued behind others without trying
     * @return the admitted request, once it took its slot; a failure with the refusal otherwise, at once when the
     *         queue is full
     */
    Uni<Admitted> await(Supplier<Admitted> attempt, GenerateRefusal why) {
        Waiter waiter = new Waiter(attempt, why);
        return Uni.createFrom().<Admitted>emitter(waiter::enter).onCancellation().invoke(waiter::cancelled);
    }

    /** Tries the head of the queue, and the next while heads are admitted or refused. */
    void drain() {
        if (drains.getAndIncrement() != 0) {
            return;
        }
        int asked = 1;
        do {
            // the outcomes are delivered outside the lock: an admitted run starts (and may end) in its subscriber
            drainOnce().forEach(Runnable::run);
            asked = drains.addAndGet(-asked);
        } while (asked != 0);
    }

    private List<Runnable> drainOnce() {
        List<Runnable> outcomes = new ArrayList<>();
        synchronized (this) {
            Instant now = clock.instant();
            while (!waiting.isEmpty()) {
                Waiter head = waiting.peekFirst();
                if (head.state.get() != State.WAITING) {
                    // cancelled, and on its way out: its turn is not tried
                    leave(head);
                    continue;
                }
                if (head.expired(now)) {
                    leave(head);
                    outcomes.add(head::timedOut);
                    continue;
                }
                Admitted admitted;
                try {
                    admitted = head.attempt.get();
                } catch (GenerateRefusal refusal) {
                    if (refusal.awaitsSlot()) {
                        head.lastRefusal = refusal;
                        break;
                    }
                    leave(head);
                    outcomes.add(() -> head.refused(refusal));
                    continue;
                } catch (RuntimeException e) {
                    leave(head);
                    outcomes.add(() -> head.failed(e));
                    continue;
                }
                leave(head);
                outcomes.add(() -> head.admit(admitted));
            }
        }
        return outcomes;
    }

    /** Refuses the waits whose deadline passed, then tries the head. */
    private void tick() {
        List<Waiter> expired = new ArrayList<>();
        synchronized (this) {
            Instant now = clock.instant();
            for (Iterator<Waiter> it = waiting.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (w.expired(now)) {
                    it.remove();
                    expired.add(w);
                }
            }
            counted();
        }
        expired.forEach(Waiter::timedOut);
        drain();
    }

    /** Takes the waiter out of the queue; guarded by this. */
    private void leave(Waiter waiter) {
        waiting.remove(waiter);
        counted();
    }

    /** Keeps {@link #depth} and the timer in step with the queue; guarded by this. */
    private void counted() {
        depth.set(waiting.size());
        if (waiting.isEmpty() && timer != -1) {
            vertx.cancelTimer(timer);
            timer = -1;
        } else if (!waiting.isEmpty() && timer == -1) {
            timer = vertx.setPeriodic(TICK.toMillis(), id -> tick());
        }
    }

    private enum State {
        WAITING,
        /** Its attempt took a slot and the run is handed to the subscriber. */
        ADMITTED,
        /** Out of the queue for good: refused, timed out, or cancelled. */
        LEFT
    }

    /** One request in the queue. Its state moves once from WAITING, to ADMITTED or to LEFT; who moves it acts. */
    private final class Waiter {
        private final Supplier<Admitted> attempt;
        private final AtomicReference<State> state = new AtomicReference<>(State.WAITING);
        private volatile GenerateRefusal lastRefusal;
        private volatile UniEmitter<? super Admitted> emitter;
        private volatile Admitted admitted;
        private volatile Instant since;
        private volatile Instant deadline;
        private volatile long sinceNanos;

        Waiter(Supplier<Admitted> attempt, GenerateRefusal why) {
            this.attempt = attempt;
            this.lastRefusal = why;
        }

        /** The subscription: joins the queue, or is refused at once when the queue is full. */
        void enter(UniEmitter<? super Admitted> em) {
            emitter = em;
            sinceNanos = System.nanoTime();
            boolean joined;
            int waitingNow;
            synchronized (AdmissionQueue.this) {
                since = clock.instant();
                deadline = since.plus(timeout);
                waitingNow = waiting.size();
                joined = waitingNow < maxWaiting;
                if (joined) {
                    waiting.addLast(this);
                    counted();
                }
            }
            if (!joined) {
                state.set(State.LEFT);
                metrics.waited(route, Outcome.FULL, Duration.ZERO);
                em.fail(GenerateRefusal.overloaded(RefusalReason.QUEUE_FULL, full(waitingNow, lastRefusal)));
                return;
            }
            drain();
        }

        boolean expired(Instant now) {
            return !now.isBefore(deadline);
        }

        /** Its turn came and the attempt took a slot: the run goes to the subscriber, unless it went away first. */
        void admit(Admitted run) {
            admitted = run;
            if (state.compareAndSet(State.WAITING, State.ADMITTED)) {
                metrics.waited(route, Outcome.ADMITTED, waited());
                emitter.complete(run);
            } else {
                // cancelled while its attempt ran: the slot goes back, to the next in line
                run.reservation().cancel();
            }
        }

        void refused(GenerateRefusal refusal) {
            if (state.compareAndSet(State.WAITING, State.LEFT)) {
                metrics.waited(route, Outcome.REFUSED, waited());
                emitter.fail(refusal);
            }
        }

        void failed(RuntimeException e) {
            if (state.compareAndSet(State.WAITING, State.LEFT)) {
                metrics.waited(route, Outcome.REFUSED, waited());
                emitter.fail(e);
            }
        }

        void timedOut() {
            if (state.compareAndSet(State.WAITING, State.LEFT)) {
                metrics.waited(route, Outcome.TIMEOUT, waited());
                emitter.fail(GenerateRefusal.overloaded(RefusalReason.QUEUE_TIMEOUT, timedOutMessage()));
            }
        }

        /**
         * The subscriber went away before it received the run (the Uni's cancellation, which then never delivers an
         * item): out of the queue at once; an admitted run it will never start gives its slot back.
         */
        void cancelled() {
            if (state.compareAndSet(State.WAITING, State.LEFT)) {
                synchronized (AdmissionQueue.this) {
                    leave(this);
                }
                metrics.waited(route, Outcome.CANCELLED, waited());
            } else if (state.compareAndSet(State.ADMITTED, State.LEFT)) {
                admitted.reservation().cancel();
            }
        }

        private Duration waited() {
            return Duration.ofNanos(System.nanoTime() - sinceNanos);
        }

        private String timedOutMessage() {
            long waitedMs = Duration.between(since, clock.instant()).toMillis();
            GenerateRefusal why = lastRefusal;
            return "route " + route + " had no slot for the request after it waited " + waitedMs + " ms in the "
                    + "route's admission queue (queue.timeout " + timeout.toMillis() + " ms)"
                    + (why == null ? "" : ": " + why.getMessage());
        }
    }

    private String full(int waitingNow, GenerateRefusal why) {
        return (why == null ? "route " + route + " has no slot" : why.getMessage()) + ", and the route's admission "
                + "queue is full (" + waitingNow + " of " + maxWaiting + " waiting)";
    }
}
