package io.handoff.benchmarks;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.StoppingOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An orchestrated context-first {@code Inference.Generate} through the gateway, on grpc-java async stubs whose
 * callbacks run on the transport's threads (direct executor): no thread is parked per stream. The stream must bring
 * {@code max-tokens} TokenOutputs with text, a GenerationFinished LENGTH and no EngineError, then end OK.
 */
final class GatewayGrpc implements Target {

    /** The deadline of a call beyond the time its tokens take to come at the simulators' pace. */
    private static final long DEADLINE_MARGIN_MS = 60_000;

    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<InferenceGrpc.InferenceStub> stubs = new ArrayList<>();
    private final AtomicLong next = new AtomicLong();
    private final String model;
    private final int maxTokens;
    private final long deadlineMs;

    /** {@code tokenIntervalMs}: the simulators' pace, so that a call of slowly paced tokens is not cut short. */
    GatewayGrpc(String target, int channelCount, String model, int maxTokens, long tokenIntervalMs) {
        for (int i = 0; i < channelCount; i++) {
            ManagedChannel channel = NettyChannelBuilder.forTarget(target).usePlaintext().directExecutor().build();
            channels.add(channel);
            stubs.add(InferenceGrpc.newStub(channel));
        }
        this.model = model;
        this.maxTokens = maxTokens;
        this.deadlineMs = DEADLINE_MARGIN_MS + 2 * maxTokens * tokenIntervalMs;
    }

    @Override
    public String key() {
        return "grpc";
    }

    @Override
    public String name() {
        return "gateway gRPC Generate";
    }

    @Override
    public void send(String requestId, String prompt, Listener listener) {
        GenerateRequest request = GenerateRequest.newBuilder().setRequestId(requestId).setModel(model)
                .setPrompt(prompt)
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens))
                .setKv(KvOptions.newBuilder().setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST))
                .build();
        InferenceGrpc.InferenceStub stub = stubs.get((int) (next.getAndIncrement() % stubs.size()));
        stub.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).generate(request, new Reader(listener));
    }

    /** Checks one Generate stream as it comes. */
    private final class Reader implements StreamObserver<GenerateResponse> {
        private final Listener listener;
        private int tokens;
        private boolean finishedLength;
        private String error;

        Reader(Listener listener) {
            this.listener = listener;
        }

        @Override
        public void onNext(GenerateResponse event) {
            switch (event.getEventCase()) {
                case TOKEN -> {
                    if (!event.getToken().getText().isEmpty() && ++tokens == 1) {
                        listener.firstToken();
                    }
                }
                case FINISHED -> finishedLength = event.getFinished().getReason() == FinishReason.FINISH_REASON_LENGTH;
                case ERROR -> error = event.getError().getCode() + " " + event.getError().getMessage();
                default -> {
                    // PrefillReady and prompt outputs are not part of what a client waits for
                }
            }
        }

        @Override
        public void onError(Throwable t) {
            listener.failed("Generate", t);
        }

        @Override
        public void onCompleted() {
            String problem = error != null ? "EngineError " + error
                    : tokens != maxTokens ? tokens + " TokenOutputs, expected " + maxTokens
                    : !finishedLength ? "no GenerationFinished LENGTH" : null;
            if (problem == null) {
                listener.completed();
            } else {
                listener.failed("Generate", new IllegalStateException(problem));
            }
        }
    }

    @Override
    public void close() {
        for (ManagedChannel channel : channels) {
            channel.shutdown();
        }
        for (ManagedChannel channel : channels) {
            try {
                if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                channel.shutdownNow();
            }
        }
    }
}
