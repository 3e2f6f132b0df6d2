package io.handoff.gateway.session.store;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.NewSession;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionIds;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.SessionTransitions;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * The store for a single replica: everything in this JVM, every operation one critical section. It keeps the
 * same index and cleanup-claim bookkeeping as the Redis store so that the reaper and the contract tests treat both
 * alike. No operation scans the stored sessions: what it counts is kept by {@link MemoryTallies} as it is written,
 * and the due index files sessions by tick ({@link DueIndex}).
 */
public final class InMemorySessionStore implements SessionStore {

    private final StoreSettings settings;
    private final Object lock = new Object();
    private final Map<String, Entry> sessions = new HashMap<>();
    private final Map<String, IdempotencyRecord> idempotency = new HashMap<>();
    private final List<DueIndex> index = new ArrayList<>();
    private final MemoryTallies tallies = new MemoryTallies();
    private Instant drainingSince;

    public InMemorySessionStore(StoreSettings settings) {
        this.settings = settings;
        for (int i = 0; i < SessionIds.BUCKETS; i++) {
            index.add(new DueIndex());
        }
    }

    private static final class Entry {
        Session session;
        /** When the session is next due in the index; null while it is not filed. */
        Instant due;
        long claimToken;
        Instant claimUntil;

        Entry(Session session) {
            this.session = session;
        }
    }

    private record IdempotencyRecord(String sessionId, String fingerprint) {
    }

    @Override
    public String kind() {
        return "memory";
    }

    private <T> Uni<T> locked(Supplier<T> action) {
        return Uni.createFrom().item(() -> {
            synchronized (lock) {
                return action.get();
            }
        });
    }

    @Override
    public Uni<Allocation> allocate(NewSession s) {
        return locked(() -> {
            String idemKey = s.tenant() + '\u0000' + s.idempotencyKey();
            IdempotencyRecord previous = idempotency.get(idemKey);
            if (previous != null) {
                Entry holder = sessions.get(previous.sessionId());
                if (s.replaceEnded()) {
                    if (holder != null && holder.session.isLiveAt(s.now())) {
                        return new Allocation(holder.session, false);
                    }
                    // The holder has ended: the new session takes over the key below.
                } else {
                    if (!previous.fingerprint().equals(s.fingerprint())) {
                        throw new SessionException(SessionFailure.IDEMPOTENCY_CONFLICT,
                                "idempotency key already used for a different allocation request");
                    }
                    if (holder != null) {
                        return new Allocation(holder.session, false);
                    }
                }
            }
            long live = tallies.live(s.tenant(), s.now());
            if (live >= settings.maxLivePerTenant()) {
                throw new SessionException(SessionFailure.QUOTA_EXCEEDED,
                        "tenant has " + live + " live sessions, the most it may have");
            }
            Session created = new Session(s.id(), s.tenant(), s.requestId(), s.model(), s.idempotencyKey(),
                    s.fingerprint(), s.style(), s.disposition(), SessionState.ALLOCATED, 1, s.now(), s.now(),
                    s.lease(), s.leaseExpiresAt(), 0, "", null, null, s.attributes(), s.route(), s.traceParent(),
                    Map.of(), List.of());
            Entry entry = new Entry(created);
            sessions.put(s.id(), entry);
            tallies.replaced(null, created);
            idempotency.put(idemKey, new IdempotencyRecord(s.id(), s.fingerprint()));
            reindex(entry, created.leaseExpiresAt());
            return new Allocation(created, true);
        });
    }

    @Override
    public Uni<Optional<Session>> find(String sessionId) {
        return locked(() -> Optional.ofNullable(sessions.get(sessionId)).map(e -> e.session));
    }

    private Entry owned(String tenant, String sessionId) {
        Entry entry = sessions.get(sessionId);
        if (entry == null || (tenant != null && !tenant.equals(entry.session.tenant()))) {
            throw SessionException.notFound();
        }
        return entry;
    }

    private static void checkEpoch(Entry entry, OptionalLong expectedEpoch) {
        if (expectedEpoch.isPresent() && expectedEpoch.getAsLong() != entry.session.epoch()) {
            throw new SessionException(SessionFailure.STALE_EPOCH,
                    "epoch " + expectedEpoch.getAsLong() + " is stale; the session is at epoch " + entry.session.epoch(),
                    entry.session);
        }
    }

    @Override
    public Uni<Session> renew(String tenant, String sessionId, Duration lease, Instant newExpiry,
            OptionalLong expectedEpoch, Instant now) {
        return locked(() -> {
            Entry entry = owned(tenant, sessionId);
            Session s = entry.session;
            if (s.isTerminal()) {
                throw new SessionException(SessionFailure.NOT_LIVE, "session is " + s.state() + "; nothing to renew", s);
            }
            if (!s.leaseExpiresAt().isAfter(now)) {
                throw new SessionException(SessionFailure.NOT_LIVE, "lease already expired; a lease is never revived", s);
            }
            checkEpoch(entry, expectedEpoch);
            write(entry, copy(s, s.state(), s.epoch(), now, lease, newExpiry, s.renewals() + 1, s.terminalReason(),
                    s.terminalAt(), s.tombstoneExpiresAt(), s.obligations()));
            if (entry.due == null || entry.due.isAfter(newExpiry)) {
                reindex(entry, newExpiry);
            }
            return entry.session;
        });
    }

    @Override
    public Uni<Transitioned> transition(TransitionCommand c) {
        return locked(() -> {
            Entry entry = owned(c.tenant(), c.sessionId());
            Session s = entry.session;
            checkEpoch(entry, c.expectedEpoch());
            if (!SessionTransitions.isLegal(s.state(), c.firstStep())) {
                throw new SessionException(s.isTerminal() ? SessionFailure.NOT_LIVE : SessionFailure.ILLEGAL_TRANSITION,
                        "cannot move a " + s.state() + " session to " + c.firstStep(), s);
            }
            if (!c.settled().isEmpty()) {
                write(entry, copy(s, s.state(), s.epoch(), c.now(), s.lease(), s.leaseExpiresAt(), s.renewals(),
                        s.terminalReason(), s.terminalAt(), s.tombstoneExpiresAt(),
                        replacing(s.obligations(), c.settled())));
            }
            if (c.via() != null) {
                moveLocked(entry, c.via(), c.reason(), c.now(), null, c.claimTtl());
            }
            return moveLocked(entry, c.target(), c.reason(), c.now(), c.claimant(), c.claimTtl());
        });
    }

    private Transitioned moveLocked(Entry entry, SessionState target, String reason, Instant now, String claimant,
            Duration claimTtl) {
        Session s = entry.session;
        boolean terminal = target.isTerminal();
        Instant tombstone = terminal ? now.plus(settings.tombstoneRetention()) : null;
        write(entry, copy(s, target, s.epoch() + 1, now, s.lease(), s.leaseExpiresAt(), s.renewals(),
                terminal ? reason : "", terminal ? now : null, tombstone, s.obligations()));
        CleanupClaim claim = CleanupClaim.NONE;
        if (terminal) {
            List<CleanupObligation> open = entry.session.pendingObligations();
            if (!open.isEmpty() && claimant != null) {
                claim = claimLocked(entry, now, claimTtl);
            } else {
                reindex(entry, open.isEmpty() ? tombstone : now);
            }
        }
        return new Transitioned(entry.session, claim);
    }

    private CleanupClaim claimLocked(Entry entry, Instant now, Duration claimTtl) {
        entry.claimToken++;
        entry.claimUntil = now.plus(claimTtl);
        reindex(entry, entry.claimUntil);
        return new CleanupClaim(entry.claimToken, entry.session.pendingObligations());
    }

    @Override
    public Uni<Session> recordObligation(String tenant, String sessionId, CleanupObligation obligation, Instant now) {
        return locked(() -> {
            Entry entry = owned(tenant, sessionId);
            Session s = entry.session;
            write(entry, copy(s, s.state(), s.epoch(), now, s.lease(), s.leaseExpiresAt(), s.renewals(),
                    s.terminalReason(), s.terminalAt(), s.tombstoneExpiresAt(),
                    replacing(s.obligations(), List.of(obligation))));
            if (s.isTerminal() && obligation.isPending() && !claimHeld(entry, now)) {
                reindex(entry, now);
            }
            return entry.session;
        });
    }

    private static boolean claimHeld(Entry entry, Instant now) {
        return entry.claimUntil != null && entry.claimUntil.isAfter(now);
    }

    @Override
    public Uni<List<List<DueEntry>>> findDue(Instant now, int limitPerBucket) {
        return locked(() -> index.stream().map(bucket -> bucket.due(now, limitPerBucket)).toList());
    }

    @Override
    public Uni<ReapStep> reap(String sessionId, Instant now, String replica, Duration claimTtl) {
        return locked(() -> {
            Entry entry = sessions.get(sessionId);
            if (entry == null) {
                // purged by an earlier reap: its index entry went with it
                return new ReapStep(ReapStep.Kind.GONE, null, CleanupClaim.NONE);
            }
            Session s = entry.session;
            if (s.state().isLive()) {
                if (s.leaseExpiresAt().isAfter(now)) {
                    reindex(entry, s.leaseExpiresAt());
                    return new ReapStep(ReapStep.Kind.NOT_DUE, s, CleanupClaim.NONE);
                }
                Transitioned t = moveLocked(entry, SessionState.EXPIRED, "lease expired", now, replica, claimTtl);
                return new ReapStep(ReapStep.Kind.EXPIRED, t.session(), t.claim());
            }
            if (!s.pendingObligations().isEmpty()) {
                if (claimHeld(entry, now)) {
                    reindex(entry, entry.claimUntil);
                    return new ReapStep(ReapStep.Kind.NOT_DUE, s, CleanupClaim.NONE);
                }
                return new ReapStep(ReapStep.Kind.CLEANUP_CLAIMED, s, claimLocked(entry, now, claimTtl));
            }
            if (s.tombstoneExpiresAt().isAfter(now)) {
                reindex(entry, s.tombstoneExpiresAt());
                return new ReapStep(ReapStep.Kind.NOT_DUE, s, CleanupClaim.NONE);
            }
            sessions.remove(sessionId);
            tallies.replaced(s, null);
            unindex(entry);
            idempotency.remove(s.tenant() + '\u0000' + s.idempotencyKey(), new IdempotencyRecord(s.id(), s.fingerprint()));
            return new ReapStep(ReapStep.Kind.PURGED, s, CleanupClaim.NONE);
        });
    }

    @Override
    public Uni<Boolean> completeCleanup(String sessionId, long claimToken, List<CleanupObligation> obligations,
            Instant retryAt, Instant keepUntil, Instant now) {
        return locked(() -> {
            Entry entry = sessions.get(sessionId);
            if (entry == null || entry.claimToken != claimToken || entry.claimUntil == null) {
                return false;
            }
            Session s = entry.session;
            Map<String, CleanupObligation> merged = new LinkedHashMap<>();
            s.obligations().forEach(o -> merged.put(o.id(), o));
            obligations.forEach(o -> merged.put(o.id(), o));
            Instant tombstone = s.tombstoneExpiresAt();
            if (keepUntil != null && (tombstone == null || keepUntil.isAfter(tombstone))) {
                tombstone = keepUntil;
            }
            write(entry, copy(s, s.state(), s.epoch(), now, s.lease(), s.leaseExpiresAt(), s.renewals(),
                    s.terminalReason(), s.terminalAt(), tombstone, new ArrayList<>(merged.values())));
            entry.claimUntil = null;
            reindex(entry, entry.session.pendingObligations().isEmpty() ? tombstone : retryAt);
            return true;
        });
    }

    @Override
    public Uni<Map<SessionState, Long>> countByState() {
        return locked(tallies::byState);
    }

    @Override
    public Uni<Long> countEngineHeld(Instant now) {
        return locked(() -> tallies.engineHeld(now));
    }

    @Override
    public Uni<List<Session>> soonestLeases(Collection<String> tenants, Instant now, int limit) {
        return locked(() -> tallies.soonestLeases(tenants, now, limit).stream()
                .map(id -> sessions.get(id).session).toList());
    }

    @Override
    public Uni<List<Session>> soonestReleases(Instant now, int limit) {
        return locked(() -> tallies.soonestReleases(now, limit));
    }

    @Override
    public Uni<Optional<Session>> findByIdempotencyKey(String tenant, String idempotencyKey) {
        return locked(() -> Optional.ofNullable(idempotency.get(tenant + '\u0000' + idempotencyKey))
                .map(r -> sessions.get(r.sessionId())).map(e -> e.session));
    }

    @Override
    public Uni<Optional<Instant>> drainingSince() {
        return locked(() -> Optional.ofNullable(drainingSince));
    }

    @Override
    public Uni<Instant> startDrain(Instant now) {
        return locked(() -> {
            if (drainingSince == null) {
                drainingSince = now;
            }
            return drainingSince;
        });
    }

    @Override
    public Uni<Void> stopDrain() {
        return locked(() -> {
            drainingSince = null;
            return null;
        });
    }

    @Override
    public Uni<Long> countLive(String tenant, Instant now) {
        return locked(() -> tallies.live(tenant, now));
    }

    @Override
    public Uni<Void> ping() {
        return Uni.createFrom().voidItem();
    }

    /** Every change of a stored session goes through here, so that the tallies follow it. */
    private void write(Entry entry, Session next) {
        tallies.replaced(entry.session, next);
        entry.session = next;
    }

    private void reindex(Entry entry, Instant due) {
        unindex(entry);
        entry.due = due;
        index.get(SessionIds.bucketOf(entry.session.id())).file(entry.session.id(), due);
    }

    private void unindex(Entry entry) {
        if (entry.due != null) {
            index.get(SessionIds.bucketOf(entry.session.id())).remove(entry.session.id(), entry.due);
            entry.due = null;
        }
    }

    /** {@code current} with each of {@code replacements} written over the obligation of the same id, or added. */
    private static List<CleanupObligation> replacing(List<CleanupObligation> current,
            List<CleanupObligation> replacements) {
        List<CleanupObligation> obligations = new ArrayList<>();
        for (CleanupObligation o : current) {
            if (replacements.stream().noneMatch(r -> r.id().equals(o.id()))) {
                obligations.add(o);
            }
        }
        obligations.addAll(replacements);
        return obligations;
    }

    private static Session copy(Session s, SessionState state, long epoch, Instant updatedAt, Duration lease,
            Instant leaseExpiresAt, int renewals, String reason, Instant terminalAt, Instant tombstone,
            List<CleanupObligation> obligations) {
        return new Session(s.id(), s.tenant(), s.requestId(), s.model(), s.idempotencyKey(), s.fingerprint(),
                s.style(), s.disposition(), state, epoch, s.createdAt(), updatedAt, lease, leaseExpiresAt, renewals,
                reason, terminalAt, tombstone, s.attributes(), s.route(), s.traceParent(), s.nativeIds(), obligations);
    }
}
