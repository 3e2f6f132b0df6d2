package io.handoff.gateway.session;

import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.store.SessionStore.Allocation;
import io.handoff.gateway.session.store.SessionStore.TransitionCommand;
import io.handoff.gateway.session.store.SessionStore.Transitioned;
import io.handoff.gateway.session.store.SessionStore;
import io.smallrye.mutiny.Uni;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The KV session lifecycle as the north-side APIs see it: allocate, get, renew, release, and the fenced moves the
 * orchestration makes. Validates everything before the store is touched, so a refused request writes nothing.
 */
public class SessionService {

    /**
     * Idempotency keys in this namespace belong to the sessions the gateway allocates for Generate
     * ({@link #allocateForGenerate}); clients may not use it, so a client key can never answer or replace one.
     */
    public static final String GENERATE_KEY_PREFIX = "generate:";

    private final SessionStore store;
    private final SessionPolicy policy;
    private final Clock clock;
    private final SessionMetrics metrics;
    private final CleanupHandoff cleanup;
    private final String replicaId;
    private final Duration claimTtl;
    private final TenantRateLimits limits;

    public SessionService(SessionStore store, SessionPolicy policy, Clock clock, SessionMetrics metrics,
            CleanupHandoff cleanup, String replicaId, Duration claimTtl) {
        this(store, policy, clock, metrics, cleanup, replicaId, claimTtl, TenantRateLimits.NONE);
    }

    public SessionService(SessionStore store, SessionPolicy policy, Clock clock, SessionMetrics metrics,
            CleanupHandoff cleanup, String replicaId, Duration claimTtl, TenantRateLimits limits) {
        this.limits = limits;
        this.store = store;
        this.policy = policy;
        this.clock = clock;
        this.metrics = metrics;
        this.cleanup = cleanup;
        this.replicaId = replicaId;
        this.claimTtl = claimTtl;
    }

    public SessionPolicy policy() {
        return policy;
    }

    /**
     * A client's allocation (AllocateKvSession). Validated first, then charged one request against the tenant's
     * rate limits (a refused one allocates nothing); its tokens are not known here and are not charged.
     */
    public Uni<Allocation> allocate(String tenant, AllocateCommand c) {
        return Uni.createFrom().deferred(() -> {
            NewSession session = validated(tenant, c, this::clientKey, false, "");
            return limits.charge(tenant, 0).flatMap(charge -> allocateInStore(session)
                    .onFailure().invoke(() -> limits.giveBack(charge)));
        });
    }

    /**
     * Allocates the session of one orchestrated Generate. The request id is the idempotency key, in a namespace
     * clients cannot use ("generate:" + requestId): a request id that is live on any replica answers the live
     * session with created=false (the caller refuses it as DUPLICATE_REQUEST); one whose earlier attempt has
     * ended gets a fresh session that replaces the ended one under the key. The command's own idempotency key
     * is not used.
     *
     * @param traceParent the W3C traceparent of the Generate's span ("" when not traced), kept on the session so
     *                    that its cleanup can be linked to the request's trace; not part of the fingerprint
     */
    public Uni<Allocation> allocateForGenerate(String tenant, AllocateCommand command, String traceParent) {
        return Uni.createFrom().deferred(() -> allocateInStore(validated(tenant, command,
                c -> GENERATE_KEY_PREFIX + c.requestId(), true, traceParent)));
    }

    private Uni<Allocation> allocateInStore(NewSession session) {
        return store.allocate(session).invoke(a -> metrics.allocated(a.created()));
    }

    private String clientKey(AllocateCommand c) {
        requireId("idempotency_key", c.idempotencyKey());
        if (c.idempotencyKey().startsWith(GENERATE_KEY_PREFIX)) {
            throw SessionException.invalid("idempotency_key may not start with \"" + GENERATE_KEY_PREFIX
                    + "\": that prefix is reserved for the sessions the gateway allocates for Generate");
        }
        return c.idempotencyKey();
    }

    /**
     * Checks everything an allocation asks for and resolves its defaults, so the store is only reached by a
     * request it can write. {@code keyOf} names the idempotency key (and checks it) once the request id is known
     * to be valid.
     */
    private NewSession validated(String tenant, AllocateCommand c, Function<AllocateCommand, String> keyOf,
            boolean replaceEnded, String traceParent) {
        requireId("request_id", c.requestId());
        requireId("model", c.model());
        String idempotencyKey = keyOf.apply(c);
        int attributesSize = c.attributes().getSerializedSize();
        if (attributesSize > policy.maxAttributesBytes()) {
            throw SessionException.invalid("attributes are " + attributesSize + " bytes; at most "
                    + policy.maxAttributesBytes() + " are accepted");
        }
        Duration lease = resolveLease(c.lease());
        ScheduleStyle style = c.style().orElse(policy.defaultStyle());
        if (!policy.supportedStyles().contains(style)) {
            throw new SessionException(SessionFailure.UNSUPPORTED, "schedule style " + style.configName()
                    + " is not supported by this deployment; supported: " + policy.supportedStyles());
        }
        TransferDisposition disposition = c.disposition().orElse(TransferDisposition.REQUIRED);
        if (disposition == TransferDisposition.BYPASS && !policy.bypassSupported()) {
            throw new SessionException(SessionFailure.UNSUPPORTED,
                    "transfer disposition BYPASS is not supported by this deployment");
        }
        return new NewSession(SessionIds.mint(), tenant, c.requestId(), c.model(), idempotencyKey,
                Fingerprint.of(c), style, disposition, lease, clock.instant(), c.attributes(), c.route(),
                traceParent == null ? "" : traceParent, replaceEnded);
    }

    public Uni<Session> get(String tenant, String sessionId) {
        return Uni.createFrom().deferred(() -> {
            requireSessionId(sessionId);
            if (!SessionIds.isWellFormed(sessionId)) {
                return Uni.createFrom().failure(SessionException.notFound());
            }
            return store.find(sessionId).map(found -> found.filter(s -> s.tenant().equals(tenant))
                    .orElseThrow(SessionException::notFound));
        });
    }

    public Uni<Session> renew(String tenant, String sessionId, Optional<Duration> requestedLease,
            OptionalLong expectedEpoch) {
        return Uni.createFrom().deferred(() -> {
            requireSessionId(sessionId);
            Duration lease = resolveLease(requestedLease);
            if (!SessionIds.isWellFormed(sessionId)) {
                return Uni.createFrom().failure(SessionException.notFound());
            }
            Instant now = clock.instant();
            return store.renew(tenant, sessionId, lease, now.plus(lease), expectedEpoch, now)
                    .invoke(renewed -> metrics.renewed());
        });
    }

    /**
     * Ends a live session as RELEASED and starts discharging what engines still hold for it. Idempotent: a
     * session that is already terminal is returned unchanged, with {@code alreadyTerminal} set.
     */
    public Uni<Released> release(String tenant, String sessionId, String reason, OptionalLong expectedEpoch) {
        return Uni.createFrom().deferred(() -> {
            requireSessionId(sessionId);
            if (!SessionIds.isWellFormed(sessionId)) {
                return Uni.createFrom().failure(SessionException.notFound());
            }
            String why = reason == null || reason.isBlank() ? "released by caller" : reason;
            return end(tenant, sessionId, SessionState.RELEASED, why, expectedEpoch, List.of())
                    .map(t -> new Released(t.session(), false))
                    .onFailure(SessionException.class).recoverWithUni(failure -> {
                        SessionException refusal = (SessionException) failure;
                        boolean ended = refusal.current().map(Session::isTerminal).orElse(false);
                        if (ended && (refusal.failure() == SessionFailure.NOT_LIVE
                                || refusal.failure() == SessionFailure.STALE_EPOCH)) {
                            return Uni.createFrom().item(new Released(refusal.current().get(), true));
                        }
                        return Uni.createFrom().failure(refusal);
                    });
        });
    }

    /**
     * One fenced move of the session. Moves into a terminal state claim the open cleanup obligations for this
     * replica and hand them to the reaper's discharger.
     */
    public Uni<Transitioned> transition(String tenant, String sessionId, SessionState target, String reason,
            OptionalLong expectedEpoch) {
        if (target.isTerminal()) {
            return end(tenant, sessionId, target, reason, expectedEpoch, List.of());
        }
        return advance(tenant, sessionId, null, target, reason, expectedEpoch, List.of());
    }

    /**
     * One fenced move of a live session to a live {@code target}, through {@code via} on the way when it is not null,
     * writing {@code held} (what engines now hold for it) in the same step: the prefill parked its KV (READY, with
     * the producer's hold recorded) and the decode attaches at once (ATTACHED), in one write instead of three.
     */
    public Uni<Transitioned> advance(String tenant, String sessionId, SessionState via, SessionState target,
            String reason, OptionalLong expectedEpoch, List<CleanupObligation> held) {
        return store.transition(new TransitionCommand(sessionId, tenant, target, expectedEpoch, reason,
                clock.instant(), null, claimTtl, held, via)).invoke(t -> {
                    if (via != null) {
                        metrics.transitioned(via);
                    }
                    metrics.transitioned(target);
                });
    }

    /**
     * Ends the session in {@code target} and, in the same fenced step, writes {@code settled} over the obligations
     * of the same ids (what the ending run knows engines no longer hold, such as KV its decode pulled), so that only
     * what is still open is claimed and discharged.
     */
    public Uni<Transitioned> end(String tenant, String sessionId, SessionState target, String reason,
            OptionalLong expectedEpoch, List<CleanupObligation> settled) {
        return store.transition(new TransitionCommand(sessionId, tenant, target, expectedEpoch, reason,
                clock.instant(), replicaId, claimTtl, settled)).invoke(t -> {
                    metrics.transitioned(target);
                    if (!t.claim().isEmpty()) {
                        cleanup.dischargeClaimed(t.session(), t.claim());
                    }
                });
    }

    public Uni<Session> recordObligation(String tenant, String sessionId, CleanupObligation obligation) {
        return store.recordObligation(tenant, sessionId, obligation, clock.instant());
    }

    private Duration resolveLease(Optional<Duration> requested) {
        if (requested.isEmpty()) {
            return policy.defaultLease();
        }
        Duration lease = requested.get();
        if (lease.isZero() || lease.isNegative()) {
            throw SessionException.invalid("lease must be positive; leave it unset for the default of "
                    + policy.defaultLease().toMillis() + " ms");
        }
        if (lease.compareTo(policy.maxLease()) > 0) {
            throw new SessionException(SessionFailure.LEASE_OUT_OF_RANGE, "lease of " + lease.toMillis()
                    + " ms is above the advertised maximum of " + policy.maxLease().toMillis() + " ms");
        }
        return lease;
    }

    private void requireId(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw SessionException.invalid(field + " is required");
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > policy.maxIdBytes()) {
            throw SessionException.invalid(field + " is " + bytes + " bytes; at most " + policy.maxIdBytes()
                    + " are accepted");
        }
    }

    private void requireSessionId(String sessionId) {
        requireId("session_id", sessionId);
    }

    /** The outcome of a release: the session as it is now, and whether it had already ended before. */
    public record Released(Session session, boolean alreadyTerminal) {
    }
}
