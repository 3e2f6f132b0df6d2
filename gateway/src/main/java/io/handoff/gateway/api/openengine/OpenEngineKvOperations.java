package io.handoff.gateway.api.openengine;

import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionService;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The OpenEngineKv operations on openengine.v1 messages, for a tenant that the transport has already established.
 * The gRPC service and the REST mirror both call these, so a request means the same thing on either; refusals
 * stay {@link io.handoff.gateway.session.SessionException}s for each transport to map to its own statuses.
 */
@ApplicationScoped
public class OpenEngineKvOperations {

    private final SessionService sessions;
    private final DrainState drain;

    public OpenEngineKvOperations(SessionService sessions, DrainState drain) {
        this.sessions = sessions;
        this.drain = drain;
    }

    /** The session, and whether this call created it (false: an identical retry answered the existing one). */
    public record Allocated(KvSession session, boolean created) {
    }

    /** Refused while the deployment drains or this replica stops; renew, release and lookup go on, so live sessions can finish. */
    public Uni<Allocated> allocate(String tenant, AllocateKvSessionRequest request) {
        if (drain.refusesNewWork()) {
            return Uni.createFrom().failure(new SessionException(
                    SessionFailure.DRAINING, drain.refusal("new KV session (renew, release and lookup go on)")));
        }
        return Uni.createFrom().deferred(() -> sessions.allocate(tenant, new AllocateCommand(
                request.getRequestId(),
                request.getModel(),
                request.getIdempotencyKey(),
                KvSessionMessages.fromProto(request.getScheduleStyle()),
                KvSessionMessages.fromProto(request.getTransferDisposition()),
                request.hasLease() ? Optional.of(KvSessionMessages.fromProto(request.getLease())) : Optional.empty(),
                request.getAttributes(),
                "")))
                .map(allocation -> new Allocated(KvSessionMessages.toProto(allocation.session()),
                        allocation.created()));
    }

    public Uni<KvSession> get(String tenant, GetKvSessionRequest request) {
        return sessions.get(tenant, request.getSessionId()).map(KvSessionMessages::toProto);
    }

    public Uni<KvSession> renew(String tenant, RenewKvSessionRequest request) {
        return Uni.createFrom().deferred(() -> sessions.renew(tenant, request.getSessionId(),
                request.hasLease() ? Optional.of(KvSessionMessages.fromProto(request.getLease())) : Optional.empty(),
                request.hasExpectedEpoch() ? OptionalLong.of(request.getExpectedEpoch()) : OptionalLong.empty()))
                .map(KvSessionMessages::toProto);
    }

    public Uni<ReleaseKvSessionResponse> release(String tenant, ReleaseKvSessionRequest request) {
        return sessions.release(tenant, request.getSessionId(), request.getReason(),
                request.hasExpectedEpoch() ? OptionalLong.of(request.getExpectedEpoch()) : OptionalLong.empty())
                .map(released -> ReleaseKvSessionResponse.newBuilder()
                        .setSession(KvSessionMessages.toProto(released.session()))
                        .setAlreadyTerminal(released.alreadyTerminal())
                        .build());
    }
}
