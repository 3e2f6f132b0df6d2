package io.handoff.gateway.session.store;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;

/**
 * What the memory store counts, kept up to date at every write instead of found by scanning every session and
 * tombstone: live leases by tenant (the quota), sessions by state, and the ended sessions whose KV an engine may still
 * hold. A write costs O(log n) of the tenant's live sessions; a count never reads a session that cannot change it.
 * Guarded by the store's lock.
 */
final class MemoryTallies {

    private record Lease(Instant expiresAt, String sessionId) implements Comparable<Lease> {
        public int compareTo(Lease o) {
            int byTime = expiresAt.compareTo(o.expiresAt);
            return byTime != 0 ? byTime : sessionId.compareTo(o.sessionId);
        }
    }

    /** Live-state sessions by tenant, earliest lease first; one whose lease ran out is dropped when next counted. */
    private final Map<String, TreeSet<Lease>> liveLeases = new HashMap<>();
    private final Map<SessionState, Long> byState = new EnumMap<>(SessionState.class);
    /** Ended sessions with an obligation that may still hold KV; one that no longer may is dropped when counted. */
    private final Map<String, Session> mayHold = new HashMap<>();

    MemoryTallies() {
        for (SessionState state : SessionState.values()) {
            byState.put(state, 0L);
        }
    }

    /** A session was written: {@code before} null when it is new, {@code after} null when it was purged. */
    void replaced(Session before, Session after) {
        // a live session moving on with the lease it had (an attach): its place among the tenant's leases stays
        boolean sameLease = before != null && after != null && before.state().isLive() && after.state().isLive()
                && before.id().equals(after.id()) && before.tenant().equals(after.tenant())
                && before.leaseExpiresAt().equals(after.leaseExpiresAt());
        if (before != null) {
            byState.merge(before.state(), -1L, Long::sum);
            if (before.state().isLive() && !sameLease) {
                TreeSet<Lease> leases = liveLeases.get(before.tenant());
                if (leases != null) {
                    leases.remove(new Lease(before.leaseExpiresAt(), before.id()));
                    if (leases.isEmpty()) {
                        liveLeases.remove(before.tenant());
                    }
                }
            }
            mayHold.remove(before.id());
        }
        if (after != null) {
            byState.merge(after.state(), 1L, Long::sum);
            if (after.state().isLive()) {
                if (!sameLease) {
                    liveLeases.computeIfAbsent(after.tenant(), t -> new TreeSet<>())
                            .add(new Lease(after.leaseExpiresAt(), after.id()));
                }
            } else if (!after.obligations().isEmpty()) {
                mayHold.put(after.id(), after);
            }
        }
    }

    /** The tenant's live sessions whose lease runs past {@code now}. A lease that ran out never comes back. */
    long live(String tenant, Instant now) {
        TreeSet<Lease> leases = liveLeases.get(tenant);
        if (leases == null) {
            return 0;
        }
        while (!leases.isEmpty() && !leases.first().expiresAt().isAfter(now)) {
            leases.pollFirst();
        }
        return leases.size();
    }

    Map<SessionState, Long> byState() {
        return new EnumMap<>(byState);
    }

    /**
     * Ids of up to {@code limit} live sessions of these tenants whose leases run past {@code now}, soonest first; at
     * most {@code limit} leases of each tenant are read.
     */
    List<String> soonestLeases(Collection<String> tenants, Instant now, int limit) {
        List<Lease> found = new ArrayList<>();
        for (String tenant : tenants) {
            TreeSet<Lease> leases = liveLeases.get(tenant);
            if (leases == null) {
                continue;
            }
            int taken = 0;
            for (Lease lease : leases.tailSet(new Lease(now, ""), true)) {
                if (taken == limit) {
                    break;
                }
                if (lease.expiresAt().isAfter(now)) {
                    found.add(lease);
                    taken++;
                }
            }
        }
        Collections.sort(found);
        return found.stream().limit(limit).map(Lease::sessionId).toList();
    }

    /**
     * Up to {@code limit} ended sessions an engine may still hold KV for at {@code now}, in the order of the Redis
     * store's engine-held index (lib.lua's index_held): by the latest moment a hold may last, a hold with no known
     * end (waiting for its discharge, or an engine's hold without a timer) last.
     */
    List<Session> soonestReleases(Instant now, int limit) {
        Comparator<Session> byRelease = Comparator.comparing((Session s) -> heldBound(s, now))
                .thenComparing(Session::id);
        PriorityQueue<Session> latestFirst = new PriorityQueue<>(byRelease.reversed());
        for (Session s : mayHold.values()) {
            if (limit > 0 && s.engineMayHoldKv(now)) {
                latestFirst.add(s);
                if (latestFirst.size() > limit) {
                    latestFirst.poll();
                }
            }
        }
        List<Session> soonest = new ArrayList<>(latestFirst);
        soonest.sort(byRelease);
        return soonest;
    }

    private static Instant heldBound(Session s, Instant now) {
        Instant bound = Instant.MIN;
        for (CleanupObligation o : s.obligations()) {
            if (!o.mayStillHold(now)) {
                continue;
            }
            if (o.isPending() || o.heldUntil() == null) {
                return Instant.MAX;
            }
            if (o.heldUntil().isAfter(bound)) {
                bound = o.heldUntil();
            }
        }
        return bound;
    }

    /** Ended sessions an engine may still hold KV for; a hold that has ended stays ended until the session changes. */
    long engineHeld(Instant now) {
        long held = 0;
        for (Iterator<Session> it = mayHold.values().iterator(); it.hasNext(); ) {
            if (it.next().engineMayHoldKv(now)) {
                held++;
            } else {
                it.remove();
            }
        }
        return held;
    }
}
