package io.handoff.gateway.session.store;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.NewSession;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.SessionTransitions;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where sessions live. Every mutation is one atomic step of the store (a Lua script on Redis, a critical section
 * in memory) and compares state and epoch before it writes: that is what makes several stateless replicas safe.
 *
 * <p>Refusals come back as a failed {@link Uni} carrying a {@link SessionException}; a store that cannot be
 * reached fails with {@link io.handoff.gateway.session.SessionFailure#STORE_UNAVAILABLE}. Time is always passed
 * in by the caller, from the injected clock.
 *
 * <p>Expiry is found through an index of "next due" times split into {@link io.handoff.gateway.session.SessionIds#BUCKETS}
 * buckets ({@link #findDue}); acting on what was found is a separate, fenced step ({@link #reap}).
 */
public interface SessionStore {

    /**
     * Creates the session, or returns the one the same tenant already created under the same idempotency key.
     * A key reused with a different fingerprint fails with IDEMPOTENCY_CONFLICT; a tenant at its live-session
     * quota fails with QUOTA_EXCEEDED. Neither writes anything.
     *
     * <p>With {@link NewSession#replaceEnded()} the holder of the key is returned only while it is live (not
     * terminal, lease not run out), whatever its fingerprint; a holder that has ended is replaced: the key is
     * given to the new session, which is created. Of several such calls racing for one key, exactly one creates.
     */
    Uni<Allocation> allocate(NewSession session);

    /** The session, live or tombstone, whatever tenant owns it; empty once purged or never created. */
    Uni<Optional<Session>> find(String sessionId);

    /**
     * Moves the lease of a live session to {@code newExpiry}. Refused with NOT_FOUND (unknown or other tenant),
     * NOT_LIVE (terminal, or lease already run out: renewing an expired lease never revives it) or STALE_EPOCH.
     */
    Uni<Session> renew(String tenant, String sessionId, Duration lease, Instant newExpiry, OptionalLong expectedEpoch,
            Instant now);

    /**
     * One compare-and-set on (state, epoch); the epoch grows by one, or by two when the command passes
     * {@link TransitionCommand#via() through} a state on its way.
     */
    Uni<Transitioned> transition(TransitionCommand command);

    /** Records what an engine holds for the session; open obligations of a terminal session become due at once. */
    Uni<Session> recordObligation(String tenant, String sessionId, CleanupObligation obligation, Instant now);

    /**
     * Every bucket of the index, in bucket order: at most {@code limitPerBucket} of its ids whose next due time is not
     * after {@code now}, oldest first (the memory store orders them to within {@value DueIndex#TICK_MILLIS} ms, see
     * {@link DueIndex}). One read for the whole index where the store can (one Redis: one round trip); a store whose
     * buckets live apart (a Redis Cluster) gives a bucket it cannot read now as empty, so that the others are swept.
     */
    Uni<List<List<DueEntry>>> findDue(Instant now, int limitPerBucket);

    /**
     * Acts on one session found due: expires it if its lease passed (claiming its cleanup for {@code replica}),
     * claims cleanup whose previous claim ran out, purges a tombstone past retention, or re-indexes it at its
     * true next due time. Each outcome happens at most once, whatever number of replicas race for it.
     */
    Uni<ReapStep> reap(String sessionId, Instant now, String replica, Duration claimTtl);

    /**
     * Writes back the obligations after a discharge attempt, if {@code claimToken} is still the current claim.
     * Open obligations become due again at {@code retryAt}; a tombstone is kept until {@code keepUntil} at the
     * least (engines may still hold KV until then). Returns false when the claim was lost to another replica.
     */
    Uni<Boolean> completeCleanup(String sessionId, long claimToken, List<CleanupObligation> obligations,
            Instant retryAt, Instant keepUntil, Instant now);

    /** Sessions in the store (live and tombstones) counted by state, over all tenants and replicas. */
    Uni<Map<SessionState, Long>> countByState();

    /**
     * Terminal sessions (over all tenants and replicas) whose KV an engine may still physically hold at {@code now}:
     * an obligation not yet discharged, or an engine's own hold that has not ended. Live sessions are not counted.
     */
    Uni<Long> countEngineHeld(Instant now);

    /**
     * Up to {@code limit} live sessions of the given tenants whose leases run out soonest after {@code now}, soonest
     * first (what an operator's view counts down). Read from each tenant's live index: at most {@code limit} entries
     * per tenant, however many sessions the store holds. A session whose index entry lags its record is answered
     * as its record says, or left out when it is no longer live.
     */
    Uni<List<Session>> soonestLeases(Collection<String> tenants, Instant now, int limit);

    /**
     * Up to {@code limit} ended sessions whose KV an engine may still hold at {@code now} (as {@link #countEngineHeld}
     * counts them), the soonest released first; a hold that waits for its discharge, or has no known end, comes
     * last. Reads at most {@code limit} entries of each index bucket.
     */
    Uni<List<Session>> soonestReleases(Instant now, int limit);

    /** The session a tenant's idempotency key points at now (live or tombstone); empty when none. */
    Uni<Optional<Session>> findByIdempotencyKey(String tenant, String idempotencyKey);

    /** Since when the deployment drains (a mark every replica on this store sees); empty when it does not. */
    Uni<Optional<Instant>> drainingSince();

    /** Marks the deployment as draining from {@code now}, unless it already is; answers since when it drains. */
    Uni<Instant> startDrain(Instant now);

    /** Removes the drain mark: the deployment takes new work again. */
    Uni<Void> stopDrain();

    /** Live sessions of one tenant, as counted for its quota. */
    Uni<Long> countLive(String tenant, Instant now);

    /** Succeeds when the store answers. */
    Uni<Void> ping();

    /** A short name for health checks and logs, e.g. {@code redis} or {@code memory}. */
    String kind();

    record Allocation(Session session, boolean created) {
    }

    record DueEntry(String sessionId, Instant due) {
    }

    /**
     * @param tenant         the caller's tenant; null for the gateway's own actors (reaper), which may act on any
     * @param expectedEpoch  when present, the move is refused unless the epoch is still this one
     * @param claimant       when non-null and the target is terminal, open obligations are claimed for it
     * @param settled        obligations written (replacing those of the same id) in the same atomic step, before the
     *                       open ones are counted and claimed: e.g. a parked KV the decode pulled, now discharged
     * @param via            null, or a live state the session passes through in the same step (READY on the way to
     *                       ATTACHED: the prefill parked, the decode attaches at once); both moves must be legal
     */
    record TransitionCommand(String sessionId, String tenant, SessionState target, OptionalLong expectedEpoch,
            String reason, Instant now, String claimant, Duration claimTtl, List<CleanupObligation> settled,
            SessionState via) {

        public TransitionCommand {
            settled = settled == null ? List.of() : List.copyOf(settled);
            if (via != null && (via.isTerminal() || !SessionTransitions.isLegal(via, target))) {
                throw new IllegalArgumentException("no move from " + via + " to " + target);
            }
        }

        public TransitionCommand(String sessionId, String tenant, SessionState target, OptionalLong expectedEpoch,
                String reason, Instant now, String claimant, Duration claimTtl, List<CleanupObligation> settled) {
            this(sessionId, tenant, target, expectedEpoch, reason, now, claimant, claimTtl, settled, null);
        }

        /** The state whose legal sources the session's state must be among: the first of the moves. */
        public SessionState firstStep() {
            return via != null ? via : target;
        }

        /** How much the epoch grows. */
        public int steps() {
            return via != null ? 2 : 1;
        }
    }

    /** The cleanup a replica claimed: it alone discharges these until the claim's deadline. */
    record CleanupClaim(long token, List<CleanupObligation> obligations) {
        public static final CleanupClaim NONE = new CleanupClaim(0, List.of());

        public boolean isEmpty() {
            return obligations.isEmpty();
        }
    }

    record Transitioned(Session session, CleanupClaim claim) {
    }

    record ReapStep(Kind kind, Session session, CleanupClaim claim) {
        public enum Kind {
            /** The record is gone; its index entry was dropped. */
            GONE,
            /** Nothing due yet (lease renewed, cleanup claimed by a live replica, tombstone still kept). */
            NOT_DUE,
            /** The lease had passed: the session is now EXPIRED, its cleanup claimed by the caller. */
            EXPIRED,
            /** A terminal session's cleanup was open and unclaimed: claimed by the caller. */
            CLEANUP_CLAIMED,
            /** The tombstone's retention passed: record, index entry and idempotency key removed. */
            PURGED
        }
    }
}
