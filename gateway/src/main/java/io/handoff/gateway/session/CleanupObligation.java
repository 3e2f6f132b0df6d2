package io.handoff.gateway.session;

import java.time.Instant;
import java.util.Map;

/**
 * Something an engine still physically holds for a session, and what must happen to it once the session is over.
 * A session can be logically terminal while an obligation is still open: capacity and drain count it until
 * the engine no longer holds the KV.
 *
 * @param id          unique within its session, chosen by whoever records it (e.g. {@code prefill@p-0})
 * @param connector   the connector that can discharge it
 * @param endpoint    the engine endpoint that holds the resource
 * @param resource    what is held, in the connector's words (e.g. {@code parked-prefill-kv})
 * @param handle      the native identities the connector needs to release it (room, rid, request ids)
 * @param heldUntil   when the engine frees the resource by itself at the latest, if it has such a timer
 * @param freedByPull whether the engine frees it as soon as the consumer pulled it (a decode that produced output
 *                    proves the pull; the obligation is then {@link #pulled()} in the same step that ends the
 *                    session)
 * @param status      where the obligation stands
 * @param attempts    how many discharge attempts failed so far
 * @param lastError   the last failure, for operators
 */
public record CleanupObligation(
        String id,
        String connector,
        String endpoint,
        String resource,
        Map<String, String> handle,
        Instant heldUntil,
        boolean freedByPull,
        Status status,
        int attempts,
        String lastError) {

    public enum Status {
        /** Not yet discharged; the reaper or the releasing replica will discharge it once the session is terminal. */
        PENDING,
        /** The engine released the resource: on our request, or by itself when the consumer pulled it. */
        DISCHARGED,
        /** The engine cannot release early; it holds the resource until {@link #heldUntil()} and frees it itself. */
        ENGINE_HELD,
        /** Discharge failed too often; left to the engine's own timer, reported as a cleanup outcome. */
        ABANDONED
    }

    public CleanupObligation {
        handle = handle == null ? Map.of() : Map.copyOf(handle);
    }

    public static CleanupObligation pending(String id, String connector, String endpoint, String resource,
            Map<String, String> handle, Instant heldUntil, boolean freedByPull) {
        return new CleanupObligation(id, connector, endpoint, resource, handle, heldUntil, freedByPull,
                Status.PENDING, 0, null);
    }

    /** The same obligation discharged by the consumer's pull: the engine freed the KV when the decode read it. */
    public CleanupObligation pulled() {
        return new CleanupObligation(id, connector, endpoint, resource, handle, heldUntil, freedByPull,
                Status.DISCHARGED, attempts, null);
    }

    /** The same obligation discharged by its leg's native abort, which was the very call its discharge makes. */
    public CleanupObligation releasedByAbort() {
        return pulled();
    }

    public boolean isPending() {
        return status == Status.PENDING;
    }

    /** Whether an engine may still physically hold the resource at {@code now}. */
    public boolean mayStillHold(Instant now) {
        return switch (status) {
            case PENDING -> true;
            case DISCHARGED -> false;
            case ENGINE_HELD, ABANDONED -> heldUntil == null || heldUntil.isAfter(now);
        };
    }

    public CleanupObligation withOutcome(Status newStatus, Instant newHeldUntil, int newAttempts, String error) {
        return new CleanupObligation(id, connector, endpoint, resource, handle, newHeldUntil, freedByPull, newStatus,
                newAttempts, error);
    }
}
