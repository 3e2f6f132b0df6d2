package io.handoff.connector.openengine;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.handoff.connector.spi.Endpoint;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvEndpoint;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.PrefillReady;
import io.handoff.openengine.v1.TokenInfo;
import io.handoff.openengine.v1.TokenOutput;
import io.handoff.openengine.v1.Usage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A minimal openengine.v1 engine in the test's process that records every request it gets. Without kv.session it
 * answers one PrefillReady with {@link #minted}; with one, a token and a GenerationFinished per output.
 */
final class RecordingEngine implements AutoCloseable {
    final List<GenerateRequest> generates = new CopyOnWriteArrayList<>();
    final List<AbortRequest> aborts = new CopyOnWriteArrayList<>();
    /** The metadata each Generate call arrived with, in the order of {@link #generates}. */
    final List<Metadata> generateMetadata = new CopyOnWriteArrayList<>();
    final KvSessionRef minted = KvSessionRef.newBuilder().setSessionId("rec-session-1").setTransferBackend("rec")
        .addEndpoints(KvEndpoint.newBuilder().setHost("10.0.0.9").setPort(7777).setProtocol("rec")).setDpRank(3)
        .setAttributesStruct(Struct.newBuilder().putFields("remote_block_ids",
            Value.newBuilder().setStringValue("9007199254740993").build()))
        .build();
    private final Server server;

    RecordingEngine() {
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(new Inference(), new MetadataRecorder()))
                .addService(new Control()).build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Endpoint endpoint(String name) {
        return Endpoint.of(name, "grpc://127.0.0.1:" + server.getPort());
    }

    private final class Inference extends InferenceGrpc.InferenceImplBase {
        @Override
        public void generate(GenerateRequest req, StreamObserver<GenerateResponse> out) {
            generates.add(req);
            String id = req.getRequestId();
            if (!req.getKv().hasSession()) {
                out.onNext(GenerateResponse.newBuilder().setRequestId(id)
                    .setPrefillReady(PrefillReady.newBuilder().setKvSession(minted)).build());
                out.onCompleted();
                return;
            }
            int n = req.getSampling().hasNumSequences() ? req.getSampling().getNumSequences() : 1;
            for (int k = 0; k < n; k++) {
                out.onNext(GenerateResponse.newBuilder().setRequestId(id).setToken(TokenOutput.newBuilder()
                    .setOutputIndex(k).addTokens(TokenInfo.newBuilder().setTokenId(1000 + k)).setText(" t" + k))
                    .build());
                GenerateResponse.Builder fin = GenerateResponse.newBuilder().setRequestId(id).setFinished(
                    GenerationFinished.newBuilder().setOutputIndex(k).setReason(FinishReason.FINISH_REASON_LENGTH));
                if (k == n - 1) {
                    fin.setUsage(Usage.newBuilder().setPromptTokens(3).setCompletionTokens(n).setTotalTokens(3 + n));
                }
                out.onNext(fin.build());
            }
            out.onCompleted();
        }
    }

    private final class MetadataRecorder implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
            generateMetadata.add(headers);
            return next.startCall(call, headers);
        }
    }

    private final class Control extends ControlGrpc.ControlImplBase {
        @Override
        public void abort(AbortRequest req, StreamObserver<AbortResponse> out) {
            aborts.add(req);
            out.onNext(AbortResponse.newBuilder().setStatus(AbortStatus.ABORT_STATUS_ABORTED).build());
            out.onCompleted();
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
    }
}
