package io.handoff.connector.openai.completion;

import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.helpers.Subscriptions;
import io.smallrye.mutiny.operators.multi.AbstractMultiOperator;
import io.smallrye.mutiny.subscription.MultiSubscriber;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The events of one chunk stream, made by one operator: each chunk becomes the events {@link CompletionEvents} makes of
 * it, the held-back finishes follow the last chunk, and a failure (of the chunks, or of a chunk that cannot be mapped)
 * delivers the finishes held so far before it. Mutiny's {@code transformToIterable} would do the first part by
 * building, subscribing and draining a stream of its own for every chunk, which cost the gateway more per relayed
 * token than reading the chunk's JSON.
 *
 * <p>One chunk is asked of the upstream at a time, when its subscriber wants events and none are waiting; the events
 * of a chunk wait here until they are asked for. Signals to the subscriber are serialized by one drain loop.
 */
final class ChunkEventStream extends AbstractMultiOperator<CompletionChunk, GenerateResponse> {

    private final String requestId;

    ChunkEventStream(Multi<CompletionChunk> chunks, String requestId) {
        super(chunks);
        this.requestId = requestId;
    }

    @Override
    public void subscribe(MultiSubscriber<? super GenerateResponse> downstream) {
        upstream.subscribe().withSubscriber(new Relay(downstream, new CompletionEvents(requestId)));
    }

    private static final class Relay implements MultiSubscriber<CompletionChunk>, Flow.Subscription {
        private final MultiSubscriber<? super GenerateResponse> downstream;
        private final CompletionEvents mapper;
        private final Queue<GenerateResponse> ready = new ConcurrentLinkedQueue<>();
        private final AtomicLong requested = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private volatile Flow.Subscription chunks;
        /** A chunk was asked for and has not come yet. */
        private volatile boolean chunkAsked;
        /** No more events will be queued; written after the last of them, and after {@link #failure}. */
        private volatile boolean upstreamDone;
        private Throwable failure;
        private volatile boolean cancelled;
        /** Drain loop only. */
        private boolean terminated;

        Relay(MultiSubscriber<? super GenerateResponse> downstream, CompletionEvents mapper) {
            this.downstream = downstream;
            this.mapper = mapper;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            chunks = subscription;
            downstream.onSubscribe(this);
        }

        @Override
        public void onItem(CompletionChunk chunk) {
            if (upstreamDone || cancelled) {
                return;
            }
            List<GenerateResponse> events;
            try {
                events = mapper.accept(chunk);
            } catch (RuntimeException unmappable) {
                chunks.cancel();
                finish(mapper.abandon(), unmappable);
                return;
            }
            ready.addAll(events);
            chunkAsked = false;
            drain();
        }

        @Override
        public void onFailure(Throwable t) {
            if (!upstreamDone) {
                finish(mapper.abandon(), t);
            }
        }

        @Override
        public void onCompletion() {
            if (!upstreamDone) {
                finish(mapper.end(), null);
            }
        }

        private void finish(List<GenerateResponse> last, Throwable cause) {
            ready.addAll(last);
            failure = cause;
            upstreamDone = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                cancel();
                downstream.onFailure(Subscriptions.getInvalidRequestException());
                return;
            }
            Subscriptions.add(requested, n);
            drain();
        }

        @Override
        public void cancel() {
            if (!cancelled) {
                cancelled = true;
                chunks.cancel();
                drain();
            }
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                if (terminated) {
                    ready.clear();
                    return;
                }
                long wanted = requested.get();
                long emitted = 0;
                while (emitted != wanted && !cancelled) {
                    GenerateResponse event = ready.poll();
                    if (event == null) {
                        break;
                    }
                    downstream.onItem(event);
                    emitted++;
                }
                if (cancelled) {
                    terminated = true;
                    ready.clear();
                    return;
                }
                if (upstreamDone && ready.isEmpty()) {
                    terminated = true;
                    if (failure != null) {
                        downstream.onFailure(failure);
                    } else {
                        downstream.onCompletion();
                    }
                    return;
                }
                if (emitted != 0 && wanted != Long.MAX_VALUE) {
                    requested.addAndGet(-emitted);
                }
                if (!upstreamDone && !chunkAsked && ready.isEmpty() && requested.get() > 0) {
                    chunkAsked = true;
                    chunks.request(1);
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
