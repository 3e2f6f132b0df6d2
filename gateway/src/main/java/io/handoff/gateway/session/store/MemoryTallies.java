package io.handoff.gateway.session.store;

import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;

import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
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
        if (before != null) {
            byState.merge(before.state(), -1L, Long::sum);
            if (before.state().isLive()) {
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
                liveLeases.computeIfAbsent(after.tenant(), t -> new TreeSet<>())
                        .add(new Lease(after.leaseExpiresAt(), after.id()));
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
