package io.handoff.gateway.api.grpc;

import io.grpc.Status;
import io.handoff.connector.spi.Leg;
import io.handoff.gateway.orchestration.GenerateOrchestrator;
import io.handoff.gateway.orchestration.GenerateRefusal;
import io.handoff.gateway.tenancy.Caller;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.Inference;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;

/**
 * openengine.v1.Inference. Generate runs as an orchestrated disaggregated request on the route serving its model.
 * A refusal before acceptance is a gRPC status; after acceptance failures are one terminal EngineError event.
 * Cancelling the call (or its deadline passing) cancels the request, which aborts its legs. A framework that drives
 * the legs itself names them in {@link ParticipantMetadata}'s metadata keys.
 */
@GrpcService
public class InferenceGrpcService implements Inference {

    private final GenerateOrchestrator orchestrator;

    public InferenceGrpcService(GenerateOrchestrator orchestrator) {
        this.orchestrator = orchestrator;
    }

    @Override
    public Multi<GenerateResponse> generate(GenerateRequest request) {
        Caller caller = GrpcCallerInterceptor.current();
        if (caller.admin()) {
            return Multi.createFrom().failure(Status.PERMISSION_DENIED
                    .withDescription("admin keys manage the deployment; Generate runs as a tenant")
                    .asRuntimeException());
        }
        var participant = ParticipantMetadata.current();
        Multi<GenerateResponse> answer = participant.isEmpty() ? orchestrator.generate(caller.tenant(), request)
                : participant.get().leg() == Leg.PREFILL
                        ? orchestrator.participantPrefill(caller.tenant(), participant.get().sessionId(), request)
                        : orchestrator.participantDecode(caller.tenant(), request);
        return answer
                .onFailure(GenerateRefusal.class).transform(f -> GrpcStatuses.refused((GenerateRefusal) f));
    }
}
