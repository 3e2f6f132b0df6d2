package io.handoff.simulator.openengine;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;

/** {@code openengine.v1.Inference}: hands each Generate to the engine's event loop. */
final class InferenceService extends InferenceGrpc.InferenceImplBase {
    private final OpenEngineSimEngine engine;

    InferenceService(OpenEngineSimEngine engine) {
        this.engine = engine;
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateResponse> observer) {
        ServerCallStreamObserver<GenerateResponse> out = (ServerCallStreamObserver<GenerateResponse>) observer;
        GenerateCall call = engine.newCall(out);
        // must be set before this method returns; the client's cancel (or deadline) is the transport-level abort
        out.setOnCancelHandler(() -> engine.onLoop(() -> engine.clientCancelled(call)));
        engine.onLoop(() -> engine.generate(request, call));
    }
}
