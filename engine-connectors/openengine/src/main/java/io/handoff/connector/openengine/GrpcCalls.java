package io.handoff.connector.openengine;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Lazy Mutiny views of grpc-java calls. Nothing is sent until subscription; cancelling the subscription cancels the
 * gRPC call (the engine sees the cancellation, its transport-level abort), and a call that already ended is never
 * cancelled.
 */
final class GrpcCalls {
    private GrpcCalls() {
    }

    /** A server-streaming call; {@code start} gets the request and the observer and starts the call. */
    static <Q, R> Multi<R> stream(Supplier<Q> request, BiConsumer<Q, StreamObserver<R>> start) {
        return Multi.createFrom().emitter(em -> {
            AtomicReference<ClientCallStreamObserver<Q>> call = new AtomicReference<>();
            AtomicBoolean ended = new AtomicBoolean();
            em.onTermination(() -> cancelIfRunning(call.get(), ended));
            start.accept(request.get(), new ClientResponseObserver<Q, R>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
                    call.set(requestStream);
                }

                @Override
                public void onNext(R value) {
                    em.emit(value);
                }

                @Override
                public void onError(Throwable t) {
                    // after our own cancel the subscriber is gone: the CANCELLED echo has nobody to go to
                    if (ended.compareAndSet(false, true)) {
                        em.fail(t);
                    }
                }

                @Override
                public void onCompleted() {
                    if (ended.compareAndSet(false, true)) {
                        em.complete();
                    }
                }
            });
            if (em.isCancelled()) {
                cancelIfRunning(call.get(), ended);
            }
        });
    }

    /** A unary call. */
    static <Q, R> Uni<R> unary(Supplier<Q> request, BiConsumer<Q, StreamObserver<R>> start) {
        return Uni.createFrom().emitter(em -> {
            AtomicReference<ClientCallStreamObserver<Q>> call = new AtomicReference<>();
            AtomicBoolean ended = new AtomicBoolean();
            AtomicReference<R> answer = new AtomicReference<>();
            em.onTermination(() -> cancelIfRunning(call.get(), ended));
            start.accept(request.get(), new ClientResponseObserver<Q, R>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
                    call.set(requestStream);
                }

                @Override
                public void onNext(R value) {
                    answer.set(value);
                }

                @Override
                public void onError(Throwable t) {
                    if (ended.compareAndSet(false, true)) {
                        em.fail(t);
                    }
                }

                @Override
                public void onCompleted() {
                    if (ended.compareAndSet(false, true)) {
                        em.complete(answer.get());
                    }
                }
            });
        });
    }

    private static void cancelIfRunning(ClientCallStreamObserver<?> call, AtomicBoolean ended) {
        if (call != null && ended.compareAndSet(false, true)) {
            call.cancel("cancelled by the Handoff gateway", null);
        }
    }
}
