package io.handoff.gateway.api.grpc;

import io.grpc.Status;
import io.handoff.gateway.api.auth.Caller;
import io.handoff.gateway.api.auth.GrpcCallerInterceptor;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.SessionService;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKv;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/** openengine.v1.OpenEngineKv: the KV session lifecycle for frameworks that allocate before either leg. */
@GrpcService
public class OpenEngineKvGrpcService implements OpenEngineKv {

    private final SessionService sessions;
    private final DrainState drain;

    public OpenEngineKvGrpcService(SessionService sessions, DrainState drain) {
        this.sessions = sessions;
        this.drain = drain;
    }

    @Override
    public Uni<KvSession> allocateKvSession(AllocateKvSessionRequest request) {
        if (drain.draining()) {
            return Uni.createFrom().failure(GrpcStatuses.draining(
                    "this deployment is draining: it allocates no new KV session; renew, release and lookup go on"));
        }
        return call(tenant -> sessions.allocate(tenant, new AllocateCommand(
                request.getRequestId(),
                request.getModel(),
                request.getIdempotencyKey(),
                KvSessionMessages.fromProto(request.getScheduleStyle()),
                KvSessionMessages.fromProto(request.getTransferDisposition()),
                request.hasLease() ? Optional.of(KvSessionMessages.fromProto(request.getLease())) : Optional.empty(),
                request.getAttributes(),
                ""))
                .map(allocation -> KvSessionMessages.toProto(allocation.session())));
    }

    @Override
    public Uni<KvSession> getKvSession(GetKvSessionRequest request) {
        return call(tenant -> sessions.get(tenant, request.getSessionId()).map(KvSessionMessages::toProto));
    }

    @Override
    public Uni<KvSession> renewKvSession(RenewKvSessionRequest request) {
        return call(tenant -> sessions.renew(tenant, request.getSessionId(),
                request.hasLease() ? Optional.of(KvSessionMessages.fromProto(request.getLease())) : Optional.empty(),
                request.hasExpectedEpoch() ? OptionalLong.of(request.getExpectedEpoch()) : OptionalLong.empty())
                .map(KvSessionMessages::toProto));
    }

    @Override
    public Uni<ReleaseKvSessionResponse> releaseKvSession(ReleaseKvSessionRequest request) {
        return call(tenant -> sessions.release(tenant, request.getSessionId(), request.getReason(),
                request.hasExpectedEpoch() ? OptionalLong.of(request.getExpectedEpoch()) : OptionalLong.empty())
                .map(released -> ReleaseKvSessionResponse.newBuilder()
                        .setSession(KvSessionMessages.toProto(released.session()))
                        .setAlreadyTerminal(released.alreadyTerminal())
                        .build()));
    }

    /** Runs one call as the current caller's tenant, translating every refusal to its gRPC status. */
    private static <T> Uni<T> call(Function<String, Uni<T>> action) {
        Caller caller = GrpcCallerInterceptor.current();
        if (caller.admin()) {
            return Uni.createFrom().failure(Status.PERMISSION_DENIED
                    .withDescription("admin keys manage the deployment; KV sessions belong to tenants")
                    .asRuntimeException());
        }
        return Uni.createFrom().deferred(() -> action.apply(caller.tenant()))
                .onFailure().transform(GrpcStatuses::toStatus);
    }
}
