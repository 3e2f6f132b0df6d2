package io.handoff.simulator.openengine;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A plain grpc-java client of one simulated engine, for tests. */
final class OeClient implements AutoCloseable {
    final ManagedChannel channel;
    final ControlGrpc.ControlBlockingStub control;
    private final InferenceGrpc.InferenceStub inference;

    OeClient(OpenEngineSimEngine engine) {
        channel = NettyChannelBuilder.forAddress(engine.host(), engine.grpcPort()).usePlaintext().build();
        control = ControlGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
        inference = InferenceGrpc.newStub(channel);
    }

    /** One Generate stream as it arrives: its events, then its final status. */
    static final class Stream {
        final List<GenerateResponse> events = new CopyOnWriteArrayList<>();
        final CompletableFuture<Status> status = new CompletableFuture<>();
        volatile ClientCallStreamObserver<GenerateRequest> call;

        Status awaitStatus() {
            return status.orTimeout(10, TimeUnit.SECONDS).join();
        }

        void cancel() {
            call.cancel("test cancels", null);
        }
    }

    Stream generate(GenerateRequest request) {
        Stream s = new Stream();
        inference.generate(request, new ClientResponseObserver<GenerateRequest, GenerateResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<GenerateRequest> requestStream) {
                s.call = requestStream;
            }

            @Override
            public void onNext(GenerateResponse value) {
                s.events.add(value);
            }

            @Override
            public void onError(Throwable t) {
                s.status.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                s.status.complete(Status.OK);
            }
        });
        return s;
    }

    /** Runs a Generate to its end. */
    Stream run(GenerateRequest request) {
        Stream s = generate(request);
        s.awaitStatus();
        return s;
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
