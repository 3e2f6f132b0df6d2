package io.handoff.gateway.testing;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.StoppingOptions;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** One Generate over real gRPC, streamed in the background: its events, its first token, how it ended. */
public final class GenerateCall {

    private final String requestId;
    private final List<GenerateResponse> events = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> firstToken = new CompletableFuture<>();
    private final CompletableFuture<Status> ended = new CompletableFuture<>();
    private volatile Metadata trailers;

    private GenerateCall(String requestId) {
        this.requestId = requestId;
    }

    /** Starts a Generate of {@code maxTokens} tokens on a model, as the tenant of {@code apiKey}. */
    public static GenerateCall start(GrpcTestClient client, String apiKey, String model, int maxTokens) {
        return start(client, apiKey, GenerateRequest.newBuilder().setRequestId("req-" + UUID.randomUUID())
                .setModel(model).setPrompt("The quick brown fox jumps over the lazy dog")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build());
    }

    public static GenerateCall start(GrpcTestClient client, String apiKey, GenerateRequest request) {
        GenerateCall call = new GenerateCall(request.getRequestId());
        GrpcTestClient.withKey(InferenceGrpc.newStub(client.channel()), apiKey).generate(request,
                new StreamObserver<>() {
                    @Override
                    public void onNext(GenerateResponse event) {
                        call.events.add(event);
                        if (event.hasToken()) {
                            call.firstToken.complete(null);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        call.trailers = Status.trailersFromThrowable(t);
                        call.firstToken.complete(null);
                        call.ended.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        call.firstToken.complete(null);
                        call.ended.complete(Status.OK);
                    }
                });
        return call;
    }

    public String requestId() {
        return requestId;
    }

    public GenerateCall awaitFirstToken() {
        firstToken.orTimeout(30, TimeUnit.SECONDS).join();
        return this;
    }

    /** The gRPC status the call ended with, waiting for it. */
    public Status awaitEnd() {
        return ended.orTimeout(60, TimeUnit.SECONDS).join();
    }

    /** The handoff-error-code trailer of a refused call, or null. */
    public String errorCode() {
        Metadata t = trailers;
        return t == null ? null : t.get(Metadata.Key.of("handoff-error-code", Metadata.ASCII_STRING_MARSHALLER));
    }

    public boolean isDone() {
        return ended.isDone();
    }

    public List<GenerateResponse> events() {
        return List.copyOf(events);
    }

    /** The finish reason of output 0, or null when the stream did not finish it. */
    public FinishReason finishReason() {
        return events.stream().filter(GenerateResponse::hasFinished).map(e -> e.getFinished().getReason())
                .findFirst().orElse(null);
    }
}
