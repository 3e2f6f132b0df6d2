package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.orchestration.LiveRequests;
import io.handoff.gateway.orchestration.RunningRequest;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionIds;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.tenancy.Caller;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.AbortStatus;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Control.Abort with the upstream statuses: exactly one target (none is INVALID_ARGUMENT), an unknown target is
 * NOT_FOUND, a target that has already finished answers ALREADY_FINISHED (a success: abort is idempotent). A tenant
 * reaches only its own requests and sessions (another tenant's are NOT_FOUND); an admin reaches every tenant's.
 *
 * <ul>
 * <li>{@code request_id}: the run on this replica is stopped (unfinished outputs end CANCELLED, its legs are
 * aborted, its session ends CANCELLED). A request running on another replica is found through its session (the
 * request id is the session's reserved idempotency key) and ended as for {@code kv_session}. Requests that bypassed
 * have no session and are reachable only on the replica that runs them; so is every request for an admin, whose
 * key has no tenant to look the session up in.</li>
 * <li>{@code kv_session}: the session moves to CANCELLED in the store, wherever its request runs, and its cleanup
 * is discharged; the run on this replica stops at once, a run on another replica at its next lease renewal.</li>
 * <li>{@code all_requests}: every request this replica runs for the caller's tenant (every tenant's for an
 * admin).</li>
 * </ul>
 */
@ApplicationScoped
public class AbortService {

    static final String REASON = "aborted by Control.Abort";

    private final LiveRequests live;
    private final SessionService sessions;
    private final SessionStore store;
    private final ControlMetrics metrics;

    public AbortService(LiveRequests live, SessionService sessions, SessionStore store, ControlMetrics metrics) {
        this.live = live;
        this.sessions = sessions;
        this.store = store;
        this.metrics = metrics;
    }

    public Uni<AbortResponse> abort(Caller caller, AbortRequest request) {
        String tenant = caller.admin() ? null : caller.tenant();
        Uni<AbortResponse> answer = switch (request.getTargetCase()) {
            case REQUEST_ID -> byRequest(tenant, request.getRequestId());
            case KV_SESSION -> bySession(tenant, request.getKvSession().getSessionId());
            case ALL_REQUESTS -> all(tenant);
            case TARGET_NOT_SET -> Uni.createFrom().failure(Status.INVALID_ARGUMENT
                    .withDescription("exactly one of request_id, kv_session or all_requests is required")
                    .asRuntimeException());
        };
        String target = request.getTargetCase().name().toLowerCase();
        return answer.invoke(r -> metrics.aborted(target, r.getStatus().name()))
                .onFailure().invoke(f -> metrics.aborted(target, Status.fromThrowable(f).getCode().name()));
    }

    private Uni<AbortResponse> byRequest(String tenant, String requestId) {
        if (requestId.isEmpty()) {
            return invalid("request_id is empty");
        }
        List<RunningRequest> here = live.find(tenant, requestId);
        if (!here.isEmpty()) {
            here.forEach(r -> r.abort(REASON));
            return Uni.createFrom().item(answer(AbortStatus.ABORT_STATUS_ABORTED, "request " + requestId
                    + " is stopping: its legs are aborted and unfinished outputs end CANCELLED"));
        }
        if (tenant == null) {
            return notFound("request " + requestId + " is not running on this replica (an admin reaches requests "
                    + "on other replicas through Abort(kv_session))");
        }
        return store.findByIdempotencyKey(tenant, SessionService.GENERATE_KEY_PREFIX + requestId)
                .onFailure(SessionException.class).transform(f -> status((SessionException) f))
                .chain(found -> {
                    if (found.isEmpty()) {
                        return notFound("no request " + requestId + " is known");
                    }
                    Session s = found.get();
                    if (s.isTerminal()) {
                        return Uni.createFrom().item(finished("request " + requestId + " has already finished ("
                                + s.state() + ")"));
                    }
                    return cancel(tenant, s.id(), "request " + requestId);
                });
    }

    private Uni<AbortResponse> bySession(String tenant, String sessionId) {
        if (sessionId.isEmpty()) {
            return invalid("kv_session.session_id is empty");
        }
        if (!SessionIds.isWellFormed(sessionId)) {
            return notFound("no KV session " + sessionId);
        }
        return cancel(tenant, sessionId, "KV session " + sessionId);
    }

    /** Ends the session CANCELLED (discharging its cleanup) and stops its run if it is on this replica. */
    private Uni<AbortResponse> cancel(String tenant, String sessionId, String what) {
        return sessions.transition(tenant, sessionId, SessionState.CANCELLED, REASON, OptionalLong.empty())
                .map(t -> {
                    live.bySession(sessionId).forEach(r -> r.abort(REASON));
                    return answer(AbortStatus.ABORT_STATUS_ABORTED, what + " is CANCELLED; its request stops");
                })
                .onFailure(SessionException.class).recoverWithUni(f -> {
                    SessionException refusal = (SessionException) f;
                    Optional<Session> current = refusal.current();
                    if (current.isPresent() && current.get().isTerminal()) {
                        return Uni.createFrom().item(finished(what + " has already ended ("
                                + current.get().state() + ")"));
                    }
                    return Uni.createFrom().failure(status(refusal));
                });
    }

    private Uni<AbortResponse> all(String tenant) {
        List<RunningRequest> running = live.all(tenant);
        running.forEach(r -> r.abort(REASON));
        return Uni.createFrom().item(running.isEmpty()
                ? finished("no request is running on this replica")
                : answer(AbortStatus.ABORT_STATUS_ABORTED, running.size() + " requests are stopping"));
    }

    private static RuntimeException status(SessionException refusal) {
        Status status = switch (refusal.failure()) {
            case NOT_FOUND -> Status.NOT_FOUND;
            case STORE_UNAVAILABLE, DRAINING -> Status.UNAVAILABLE;
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            default -> Status.FAILED_PRECONDITION;
        };
        return status.withDescription(refusal.failure() == SessionFailure.NOT_FOUND ? "no such KV session"
                : refusal.getMessage()).asRuntimeException();
    }

    private static AbortResponse answer(AbortStatus status, String message) {
        return AbortResponse.newBuilder().setStatus(status).setMessage(message).build();
    }

    private static AbortResponse finished(String message) {
        return answer(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, message);
    }

    private static Uni<AbortResponse> invalid(String message) {
        return Uni.createFrom().failure(Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException());
    }

    private static Uni<AbortResponse> notFound(String message) {
        return Uni.createFrom().failure(Status.NOT_FOUND.withDescription(message).asRuntimeException());
    }
}
