package io.handoff.gateway.api.grpc;

import io.grpc.Status;
import io.handoff.gateway.api.openengine.OpenEngineKvOperations;
import io.handoff.gateway.tenancy.Caller;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKv;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;

import java.util.function.Function;

/** openengine.v1.OpenEngineKv: the KV session lifecycle for frameworks that allocate before either leg. */
@GrpcService
public class OpenEngineKvGrpcService implements OpenEngineKv {

    private final OpenEngineKvOperations operations;

    public OpenEngineKvGrpcService(OpenEngineKvOperations operations) {
        this.operations = operations;
    }

    @Override
    public Uni<KvSession> allocateKvSession(AllocateKvSessionRequest request) {
        return call(tenant -> operations.allocate(tenant, request).map(OpenEngineKvOperations.Allocated::session));
    }

    @Override
    public Uni<KvSession> getKvSession(GetKvSessionRequest request) {
        return call(tenant -> operations.get(tenant, request));
    }

    @Override
    public Uni<KvSession> renewKvSession(RenewKvSessionRequest request) {
        return call(tenant -> operations.renew(tenant, request));
    }

    @Override
    public Uni<ReleaseKvSessionResponse> releaseKvSession(ReleaseKvSessionRequest request) {
        return call(tenant -> operations.release(tenant, request));
    }

    /** Runs one call as the current caller's tenant, translating every refusal to its gRPC status. */
    private static <T> Uni<T> call(Function<String, Uni<T>> action) {
        Caller caller = GrpcCallerInterceptor.current();
        if (caller.admin()) {
            return Uni.createFrom().failure(Status.PERMISSION_DENIED
                    .withDescription(Caller.ADMIN_OWNS_NO_SESSIONS)
                    .asRuntimeException());
        }
        return Uni.createFrom().deferred(() -> action.apply(caller.tenant()))
                .onFailure().transform(GrpcStatuses::toStatus);
    }
}
