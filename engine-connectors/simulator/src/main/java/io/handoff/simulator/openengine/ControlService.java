package io.handoff.simulator.openengine;

import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import java.util.function.Supplier;

/**
 * {@code openengine.v1.Control}: discovery, load, health and abort, answered on the engine's event loop. LoRA and KV
 * event RPCs stay UNIMPLEMENTED, as on an engine without those features.
 */
final class ControlService extends ControlGrpc.ControlImplBase {
    private final OpenEngineSimEngine engine;

    ControlService(OpenEngineSimEngine engine) {
        this.engine = engine;
    }

    @Override
    public void getServerInfo(GetServerInfoRequest request, StreamObserver<ServerInfo> out) {
        answer(out, engine::serverInfo);
    }

    @Override
    public void getModelInfo(GetModelInfoRequest request, StreamObserver<ModelInfo> out) {
        answer(out, () -> engine.modelInfo(request.getModel()));
    }

    @Override
    public void getLoad(GetLoadRequest request, StreamObserver<LoadInfo> out) {
        answer(out, engine::load);
    }

    @Override
    public void health(HealthRequest request, StreamObserver<HealthResponse> out) {
        answer(out, engine::health);
    }

    @Override
    public void abort(AbortRequest request, StreamObserver<AbortResponse> out) {
        answer(out, () -> engine.abort(request));
    }

    /** Unary RPCs report every failure as a non-OK status. */
    private <T> void answer(StreamObserver<T> out, Supplier<T> body) {
        engine.onLoop(() -> {
            try {
                out.onNext(body.get());
                out.onCompleted();
            } catch (StatusRuntimeException e) {
                out.onError(e);
            }
        });
    }
}
