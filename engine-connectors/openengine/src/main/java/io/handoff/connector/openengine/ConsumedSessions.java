package io.handoff.connector.openengine;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sessions this connector saw a decode engine produce tokens from. Such a decode has pulled the KV, and the producer
 * frees it on the pull, so a discharge of that session can answer RELEASED at once instead of "the engine holds it
 * until its timeout". It is a local, best-effort memory: another replica, or this one after a restart, falls back to
 * the conservative answer, which is still correct. Entries live until the hold would have ended anyway.
 */
final class ConsumedSessions {
    private final Map<String, Instant> sessions = new ConcurrentHashMap<>();
    private final Clock clock;

    ConsumedSessions(Clock clock) {
        this.clock = clock;
    }

    void consumed(String sessionId, Instant forgetAfter) {
        Instant now = clock.instant();
        sessions.values().removeIf(until -> until.isBefore(now));
        sessions.put(sessionId, forgetAfter);
    }

    boolean wasConsumed(String sessionId) {
        return sessionId != null && sessions.containsKey(sessionId);
    }
}
