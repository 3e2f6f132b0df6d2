package io.handoff.simulator.openengine;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.simulator.SimEngine;

/** {@code openengine.v1.Inference}: hands each Generate to the engine's event loop. */
final class InferenceService extends InferenceGrpc.InferenceImplBase {

    private static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of(SimEngine.TRACEPARENT,
        Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<String> CALL_TRACEPARENT = Context.key(SimEngine.TRACEPARENT);

    /** Makes the trace context metadata of each call readable where the call is handled. */
    static final ServerInterceptor TRACE_CONTEXT = new ServerInterceptor() {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
            ServerCallHandler<Q, A> next) {
            return Contexts.interceptCall(Context.current().withValue(CALL_TRACEPARENT, headers.get(TRACEPARENT)),
                call, headers, next);
        }
    };

    private final OpenEngineSimEngine engine;

    InferenceService(OpenEngineSimEngine engine) {
        this.engine = engine;
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateResponse> observer) {
        ServerCallStreamObserver<GenerateResponse> out = (ServerCallStreamObserver<GenerateResponse>) observer;
        GenerateCall call = engine.newCall(out);
        String traceParent = CALL_TRACEPARENT.get();
        // must be set before this method returns; the client's cancel (or deadline) is the transport-level abort
        out.setOnCancelHandler(() -> engine.onLoop(() -> engine.clientCancelled(call)));
        engine.onLoop(() -> engine.generate(request, call, traceParent));
    }
}
