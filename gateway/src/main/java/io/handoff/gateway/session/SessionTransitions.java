package io.handoff.gateway.session;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static io.handoff.gateway.session.SessionState.*;

/**
 * The one owner of the legal moves of a session. Stores never decide legality themselves: they are handed
 * {@link #sourcesOf(SessionState)} and compare-and-set against it, so the table below is the whole truth.
 *
 * <p>ALLOCATED to ATTACHED exists because in generation-first and concurrent flows the consumer attaches to the
 * rendezvous before the producer has filled it. COMPLETE is reachable only from ATTACHED: a transfer completes
 * only after somebody attached. Terminal states have no way out.
 */
public final class SessionTransitions {

    private static final Map<SessionState, Set<SessionState>> SOURCES = new EnumMap<>(SessionState.class);

    static {
        Set<SessionState> live = EnumSet.of(ALLOCATED, READY, ATTACHED);
        SOURCES.put(ALLOCATED, EnumSet.noneOf(SessionState.class));
        SOURCES.put(READY, EnumSet.of(ALLOCATED));
        SOURCES.put(ATTACHED, EnumSet.of(ALLOCATED, READY));
        SOURCES.put(COMPLETE, EnumSet.of(ATTACHED));
        SOURCES.put(BYPASSED, EnumSet.of(ALLOCATED));
        SOURCES.put(REJECTED, EnumSet.of(ALLOCATED, READY));
        SOURCES.put(CANCELLED, live);
        SOURCES.put(FAILED, live);
        SOURCES.put(RELEASED, live);
        SOURCES.put(EXPIRED, live);
        SOURCES.replaceAll((k, v) -> Collections.unmodifiableSet(v));
    }

    private SessionTransitions() {
    }

    /** The states from which {@code target} may be entered; empty for ALLOCATED, which only creation enters. */
    public static Set<SessionState> sourcesOf(SessionState target) {
        return SOURCES.get(target);
    }

    public static boolean isLegal(SessionState from, SessionState to) {
        return SOURCES.get(to).contains(from);
    }
}
