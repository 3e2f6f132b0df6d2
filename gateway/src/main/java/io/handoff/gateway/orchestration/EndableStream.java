package io.handoff.gateway.orchestration;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.helpers.Subscriptions;
import io.smallrye.mutiny.operators.multi.AbstractMultiOperator;
import io.smallrye.mutiny.operators.multi.MultiOperatorProcessor;
import io.smallrye.mutiny.subscription.MultiSubscriber;
import io.smallrye.mutiny.subscription.SerializedSubscriber;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A stream that can be ended from outside, from any thread: its upstream is cancelled and its subscriber completes (or
 * fails) at once, exactly once, serialized with the items in flight. One operator does what the hot path needs of it
 * for every token at the cost of a volatile write: a stop signal ({@link #until}) and a silence limit with one timer
 * per stream ({@link #failWhenSilent}), where Mutiny's {@code ifNoItem} would reschedule a timer on every item.
 */
final class EndableStream<T> extends AbstractMultiOperator<T, T> {

    private final Consumer<Ending<T>> onSubscribe;

    private EndableStream(Multi<? extends T> upstream, Consumer<Ending<T>> onSubscribe) {
        super(upstream);
        this.onSubscribe = onSubscribe;
    }

    /**
     * Completes the stream once {@code stop} completes with a reason (its upstream cancelled); when the stream ends by
     * itself {@code stop} is completed with null, so nothing waits on it.
     */
    static <T> Multi<T> until(Multi<T> upstream, CompletableFuture<String> stop) {
        return new EndableStream<T>(upstream, ending -> {
            ending.whenTerminated(() -> stop.complete(null));
            stop.whenComplete((reason, failure) -> {
                if (reason != null) {
                    ending.end(null);
                }
            });
        });
    }

    /**
     * Fails the stream with {@code failure} once it has been silent for {@code limit}, before its first item or
     * between two. The one timer per stream is re-armed for what remains of the limit when it finds an item came.
     */
    static <T> Multi<T> failWhenSilent(Multi<T> upstream, Duration limit, Supplier<? extends Throwable> failure,
            Vertx vertx) {
        long limitNanos = limit.toNanos();
        return new EndableStream<T>(upstream, ending -> {
            long[] timer = {-1};
            class Check implements Handler<Long> {
                @Override
                public void handle(Long id) {
                    if (ending.isTerminated()) {
                        return;
                    }
                    long silent = System.nanoTime() - ending.lastItemNanos();
                    if (silent >= limitNanos) {
                        ending.end(failure.get());
                    } else {
                        timer[0] = vertx.setTimer(Math.max(1, (limitNanos - silent) / 1_000_000), this);
                    }
                }
            }
            timer[0] = vertx.setTimer(Math.max(1, limit.toMillis()), new Check());
            ending.whenTerminated(() -> vertx.cancelTimer(timer[0]));
        });
    }

    @Override
    public void subscribe(MultiSubscriber<? super T> downstream) {
        Ending<T> ending = new Ending<>(new SerializedSubscriber<>(downstream));
        upstream.subscribe().withSubscriber(ending);
        onSubscribe.accept(ending);
    }

    /** The processor: items pass straight through; the first end, from upstream or from outside, wins. */
    static final class Ending<T> extends MultiOperatorProcessor<T, T> {
        private final AtomicBoolean terminated = new AtomicBoolean();
        private volatile long lastItemNanos = System.nanoTime();
        /** Guarded by this; null once run. */
        private List<Runnable> onTerminated = new ArrayList<>();

        Ending(MultiSubscriber<? super T> downstream) {
            super(downstream);
        }

        @Override
        public void onItem(T item) {
            if (!terminated.get()) {
                lastItemNanos = System.nanoTime();
                downstream.onItem(item);
            }
        }

        @Override
        public void onFailure(Throwable failure) {
            if (terminate()) {
                downstream.onFailure(failure);
            }
        }

        @Override
        public void onCompletion() {
            if (terminate()) {
                downstream.onCompletion();
            }
        }

        @Override
        public void cancel() {
            terminate();
            super.cancel();
        }

        /** Ends the stream from outside: completes it ({@code failure} null) or fails it; only the first end counts. */
        void end(Throwable failure) {
            if (!terminate()) {
                return;
            }
            Flow.Subscription up = getAndSetUpstreamSubscription(Subscriptions.CANCELLED);
            if (up != null) {
                up.cancel();
            }
            if (failure == null) {
                downstream.onCompletion();
            } else {
                downstream.onFailure(failure);
            }
        }

        boolean isTerminated() {
            return terminated.get();
        }

        long lastItemNanos() {
            return lastItemNanos;
        }

        /** Runs {@code action} once the stream has ended, however it ended (at once if it already has). */
        void whenTerminated(Runnable action) {
            synchronized (this) {
                if (onTerminated != null) {
                    onTerminated.add(action);
                    return;
                }
            }
            action.run();
        }

        private boolean terminate() {
            if (!terminated.compareAndSet(false, true)) {
                return false;
            }
            List<Runnable> actions;
            synchronized (this) {
                actions = onTerminated;
                onTerminated = null;
            }
            actions.forEach(Runnable::run);
            return true;
        }
    }
}
