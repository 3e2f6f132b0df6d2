package io.handoff.gateway.testing;

import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.store.SessionStore;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Finds the sessions the gateway allocated for a Generate, through the store's own interface: every stored session
 * (live or tombstone) is in the due index, so a scan of every bucket as of a far future finds them all. The request
 * id of a session never changes, so each session is read once to learn it.
 */
public final class GenerateSessions {

    private static final Instant FAR_FUTURE = Instant.parse("2999-01-01T00:00:00Z");
    private static final Map<String, String> REQUEST_OF = new ConcurrentHashMap<>();

    private final SessionStore store;

    public GenerateSessions(SessionStore store) {
        this.store = store;
    }

    /** The sessions of a request id, oldest first, as stored now. */
    public List<Session> of(String requestId) {
        List<String> ids = store.findDue(FAR_FUTURE, 100_000)
                .map(buckets -> buckets.stream().flatMap(List::stream).map(SessionStore.DueEntry::sessionId).toList())
                .await().atMost(StreamingGenerate.WAIT);
        List<Session> found = new ArrayList<>();
        for (String id : ids) {
            String known = REQUEST_OF.get(id);
            if (known != null && !known.equals(requestId)) {
                continue;
            }
            Optional<Session> s = store.find(id).await().atMost(StreamingGenerate.WAIT);
            s.ifPresent(session -> {
                REQUEST_OF.put(session.id(), session.requestId());
                if (session.requestId().equals(requestId)) {
                    found.add(session);
                }
            });
        }
        found.sort(Comparator.comparing(Session::createdAt).thenComparing(Session::epoch));
        return found;
    }

    /** The one session of a request id, once it satisfies {@code until} (cleanup and transitions are asynchronous). */
    public Session awaitOne(String requestId, String what, Predicate<Session> until) {
        return Awaitility.await(requestId + ": " + what).atMost(StreamingGenerate.WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    List<Session> sessions = of(requestId);
                    if (sessions.size() > 1) {
                        throw new AssertionError("more than one session for " + requestId + ": " + sessions);
                    }
                    return sessions.isEmpty() ? null : sessions.get(0);
                }, s -> s != null && until.test(s));
    }

    /** Every session in the store, live or tombstone, of every tenant. */
    public long count() {
        return store.countByState().await().atMost(StreamingGenerate.WAIT).values().stream().mapToLong(Long::longValue)
                .sum();
    }
}
