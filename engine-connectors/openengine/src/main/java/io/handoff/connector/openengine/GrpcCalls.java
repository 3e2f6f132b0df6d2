package io.handoff.connector.openengine;

import io.grpc.Context;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Lazy Mutiny views of grpc-java calls. Nothing is sent until subscription; cancelling the subscription cancels the
 * gRPC call (the engine sees the cancellation, its transport-level abort), and a call that already ended is never
 * cancelled.
 *
 * <p>Only that cancels a call. grpc-java would also cancel it with the {@link Context} current where it starts, and a
 * call to an engine often starts inside a client's call to the gateway: a participant's release discharges the KV
 * as it answers, a client that went away has its legs aborted. The client's call ending must not cut those off (an
 * Abort the engine carried out but whose answer was lost is tried again, a second discharge), so every call starts
 * in a fork of the current context: its values, not its cancellation or deadline.
 */
final class GrpcCalls {
    private GrpcCalls() {
    }

    /** A server-streaming call; {@code start} gets the request and the observer and starts the call. */
    static <Q, R> Multi<R> stream(Supplier<Q> request, BiConsumer<Q, StreamObserver<R>> start) {
        return Multi.createFrom().emitter(em -> {
            CallObserver<Q, R> call = new CallObserver<>(em::emit, em::fail, em::complete);
            em.onTermination(call::cancelIfRunning);
            startDetached(request, start, call);
            call.started();
            if (em.isCancelled()) {
                call.cancelIfRunning();
            }
        });
    }

    /** A unary call. */
    static <Q, R> Uni<R> unary(Supplier<Q> request, BiConsumer<Q, StreamObserver<R>> start) {
        return Uni.createFrom().emitter(em -> {
            AtomicReference<R> answer = new AtomicReference<>();
            CallObserver<Q, R> call = new CallObserver<>(answer::set, em::fail, () -> em.complete(answer.get()));
            em.onTermination(call::cancelIfRunning);
            startDetached(request, start, call);
            call.started();
        });
    }

    private static <Q, R> void startDetached(Supplier<Q> request, BiConsumer<Q, StreamObserver<R>> start,
            StreamObserver<R> call) {
        Context.current().fork().run(() -> start.accept(request.get(), call));
    }

    /**
     * The observer of one call: it keeps the call to cancel it, and lets only the call's first end through.
     *
     * <p>A cancel that arrives while the call is still being started (from another thread: a combination whose other
     * call failed cancels this one) is deferred until the start returns, and then done by the starting thread. A gRPC
     * call is not safe to cancel concurrently with its start: grpc-java then fails inside its own synchronization
     * context, the cancel throws, and the failure that caused it never reaches the subscriber.
     */
    private static final class CallObserver<Q, R> implements ClientResponseObserver<Q, R> {
        private static final int STARTING = 0;
        private static final int STARTED = 1;
        private static final int CANCEL_WHEN_STARTED = 2;

        private final AtomicReference<ClientCallStreamObserver<Q>> call = new AtomicReference<>();
        private final AtomicBoolean ended = new AtomicBoolean();
        private final AtomicInteger phase = new AtomicInteger(STARTING);
        private final Consumer<R> onValue;
        private final Consumer<Throwable> onFailure;
        private final Runnable onEnd;

        CallObserver(Consumer<R> onValue, Consumer<Throwable> onFailure, Runnable onEnd) {
            this.onValue = onValue;
            this.onFailure = onFailure;
            this.onEnd = onEnd;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
            call.set(requestStream);
        }

        @Override
        public void onNext(R value) {
            onValue.accept(value);
        }

        @Override
        public void onError(Throwable t) {
            // after our own cancel the subscriber is gone: the CANCELLED echo has nobody to go to
            if (ended.compareAndSet(false, true)) {
                onFailure.accept(t);
            }
        }

        @Override
        public void onCompleted() {
            if (ended.compareAndSet(false, true)) {
                onEnd.run();
            }
        }

        /** The start returned: from now on a cancel is done at once, and one that waited for the start is done now. */
        void started() {
            if (!phase.compareAndSet(STARTING, STARTED)) {
                cancelNow();
            }
        }

        void cancelIfRunning() {
            if (phase.compareAndSet(STARTING, CANCEL_WHEN_STARTED)) {
                return;
            }
            cancelNow();
        }

        private void cancelNow() {
            ClientCallStreamObserver<Q> running = call.get();
            if (running != null && ended.compareAndSet(false, true)) {
                running.cancel("cancelled by the Handoff gateway", null);
            }
        }
    }
}
