package io.handoff.gateway.orchestration;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.helpers.Subscriptions;
import io.smallrye.mutiny.operators.multi.AbstractMultiOperator;
import io.smallrye.mutiny.operators.multi.MultiOperatorProcessor;
import io.smallrye.mutiny.subscription.MultiSubscriber;

import java.util.concurrent.Flow;
import java.util.function.Function;

/**
 * Each item mapped to one item, or dropped when the mapping answers null; a dropped item is replaced by asking the
 * upstream for one more, so the subscriber's demand is met. Every relayed token passes through this: Mutiny's
 * {@code transformToIterable} of a list of zero or one would build and drain a stream of its own per item. A mapping
 * that throws cancels the upstream and fails the stream.
 */
final class MapOrDrop<T, R> extends AbstractMultiOperator<T, R> {

    private final Function<? super T, ? extends R> mapping;

    private MapOrDrop(Multi<T> upstream, Function<? super T, ? extends R> mapping) {
        super(upstream);
        this.mapping = mapping;
    }

    /** {@code upstream}'s items mapped by {@code mapping}, without those it maps to null. */
    static <T, R> Multi<R> of(Multi<T> upstream, Function<? super T, ? extends R> mapping) {
        return new MapOrDrop<>(upstream, mapping);
    }

    @Override
    public void subscribe(MultiSubscriber<? super R> downstream) {
        upstream.subscribe().withSubscriber(new Mapper<T, R>(downstream, mapping));
    }

    private static final class Mapper<T, R> extends MultiOperatorProcessor<T, R> {
        private final Function<? super T, ? extends R> mapping;

        Mapper(MultiSubscriber<? super R> downstream, Function<? super T, ? extends R> mapping) {
            super(downstream);
            this.mapping = mapping;
        }

        @Override
        public void onItem(T item) {
            if (isDone()) {
                return;
            }
            R mapped;
            try {
                mapped = mapping.apply(item);
            } catch (RuntimeException failure) {
                Flow.Subscription up = getAndSetUpstreamSubscription(Subscriptions.CANCELLED);
                if (up != Subscriptions.CANCELLED) {
                    up.cancel();
                    downstream.onFailure(failure);
                }
                return;
            }
            if (mapped != null) {
                downstream.onItem(mapped);
            } else {
                request(1);
            }
        }
    }
}
