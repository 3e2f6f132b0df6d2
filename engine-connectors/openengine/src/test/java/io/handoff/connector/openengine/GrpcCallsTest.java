package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.simulator.Role;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The Mutiny views of gRPC calls under a cancel that races the call's start: a probe combines four calls, and the
 * first to fail cancels the others from its own thread while they may still be starting on the caller's.
 */
class GrpcCallsTest extends SimulatorSupport {

    @Test
    void aCancelWhileTheCallIsStartingWaitsForTheStartAndIsDoneOnce() throws Exception {
        OpenEngineSimEngine engine = engine(Role.PREFILL, c -> { });
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", engine.grpcPort()).usePlaintext().build();
        try {
            List<String> events = new CopyOnWriteArrayList<>();
            CountDownLatch starting = new CountDownLatch(1);
            CountDownLatch cancelRequested = new CountDownLatch(1);
            ControlGrpc.ControlStub stub = ControlGrpc.newStub(channel)
                    .withInterceptors(new SlowStart(events, starting, cancelRequested));
            Uni<HealthResponse> health = GrpcCalls.unary(HealthRequest::getDefaultInstance, stub::health);

            AtomicReference<UniSubscription> subscription = new AtomicReference<>();
            AtomicReference<Object> delivered = new AtomicReference<>();
            CompletableFuture<Void> subscribing = CompletableFuture.runAsync(() -> health.subscribe()
                    .withSubscriber(new UniSubscriber<HealthResponse>() {
                        @Override
                        public void onSubscribe(UniSubscription s) {
                            subscription.set(s);
                        }

                        @Override
                        public void onItem(HealthResponse item) {
                            delivered.set(item);
                        }

                        @Override
                        public void onFailure(Throwable failure) {
                            delivered.set(failure);
                        }
                    }));
            assertTrue(starting.await(10, TimeUnit.SECONDS), "the call never started");
            subscription.get().cancel();
            cancelRequested.countDown();
            subscribing.get(10, TimeUnit.SECONDS);

            assertEquals(List.of("start", "started", "cancel"), events,
                    "the cancel must wait for the start to return, then cancel the call once");
            assertEquals(null, delivered.get(), "a cancelled subscriber hears nothing");
        } finally {
            channel.shutdownNow();
        }
    }

    /** Holds the call in its start until the test has cancelled it, and records the order of start and cancel. */
    private static final class SlowStart implements ClientInterceptor {
        private final List<String> events;
        private final CountDownLatch starting;
        private final CountDownLatch cancelRequested;

        SlowStart(List<String> events, CountDownLatch starting, CountDownLatch cancelRequested) {
            this.events = events;
            this.starting = starting;
            this.cancelRequested = cancelRequested;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
                Channel next) {
            return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    events.add("start");
                    starting.countDown();
                    try {
                        assertTrue(cancelRequested.await(10, TimeUnit.SECONDS), "the test never cancelled");
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    super.start(listener, headers);
                    events.add("started");
                }

                @Override
                public void cancel(String message, Throwable cause) {
                    events.add("cancel");
                    super.cancel(message, cause);
                }
            };
        }
    }
}
