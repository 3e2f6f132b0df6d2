package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.SessionState;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The last handoffs this replica ended, for the operator's live view: the same facts as the request log line
 * ({@link RequestLog#NAME}), kept in a ring of {@value #CAPACITY}. Writing one is a counter increment, one small
 * record and one slot write (no lock, no copy; about 60 ns on one core), so the request path does not notice it;
 * reading copies the ring.
 */
@Singleton
public class RecentHandoffs {

    /** How many ended handoffs are kept; older ones are overwritten. */
    public static final int CAPACITY = 100;

    /**
     * One ended handoff.
     *
     * @param sequence  its place in this replica's order of endings (a slot being overwritten is told apart by it)
     * @param style     the schedule style, or {@code participant-prefill}/{@code participant-decode} for a
     *                  participant's leg
     * @param state     the state its session ended in
     * @param endedAt   when the session ended, by the store's record (the injected clock)
     * @param durationNanos from the call's arrival to its session's end
     */
    public record EndedHandoff(long sequence, String requestId, String route, String style, String prefill,
            String decode, String sessionId, SessionState state, Instant endedAt, long durationNanos, String traceId) {

        public Duration duration() {
            return Duration.ofNanos(durationNanos);
        }
    }

    private final AtomicReferenceArray<EndedHandoff> slots = new AtomicReferenceArray<>(CAPACITY);
    private final AtomicLong appended = new AtomicLong();

    void add(String requestId, String route, String style, String prefill, String decode, String sessionId,
            SessionState state, Instant endedAt, long arrivedNanos, String traceId) {
        long sequence = appended.getAndIncrement();
        slots.set((int) (sequence % CAPACITY), new EndedHandoff(sequence, requestId, route, style, prefill, decode,
                sessionId, state, endedAt, System.nanoTime() - arrivedNanos, traceId));
    }

    /** Up to {@code limit} of the last ended handoffs, the newest first. */
    public List<EndedHandoff> newestFirst(int limit) {
        long end = appended.get();
        List<EndedHandoff> out = new ArrayList<>(Math.min(limit, CAPACITY));
        for (long sequence = end - 1; sequence >= 0 && sequence >= end - CAPACITY && out.size() < limit; sequence--) {
            EndedHandoff h = slots.get((int) (sequence % CAPACITY));
            // a writer that took its sequence but has not yet written leaves an older entry here: skip it
            if (h != null && h.sequence() == sequence) {
                out.add(h);
            }
        }
        return out;
    }
}
