package io.handoff.gateway.api.grpc;

import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.Inference;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;

/** openengine.v1.Inference. Generate is served once routes and connectors exist; until then it says so. */
@GrpcService
public class InferenceGrpcService implements Inference {

    @Override
    public Multi<GenerateResponse> generate(GenerateRequest request) {
        return Multi.createFrom().failure(Unimplemented.rpc("Inference/Generate",
                "no routes to engines are configured in this build; use OpenEngineKv for sessions"));
    }
}
