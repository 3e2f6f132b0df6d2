package io.handoff.gateway.reaper;

import java.time.Instant;

/**
 * What a connector answered when asked to discharge one cleanup obligation.
 *
 * @param outcome   what happened
 * @param heldUntil for {@link Outcome#ENGINE_HOLDS}: when the engine's own timer frees the resource
 * @param error     for {@link Outcome#RETRY}: why it failed
 */
public record Discharge(Outcome outcome, Instant heldUntil, String error) {

    public enum Outcome {
        /** The engine freed the resource (or confirmed it no longer holds it). */
        RELEASED,
        /** The engine cannot free it early; it will hold it until {@code heldUntil} and then free it itself. */
        ENGINE_HOLDS,
        /** Transient failure: try again later. */
        RETRY
    }

    public static Discharge released() {
        return new Discharge(Outcome.RELEASED, null, null);
    }

    public static Discharge engineHoldsUntil(Instant until) {
        return new Discharge(Outcome.ENGINE_HOLDS, until, null);
    }

    public static Discharge retry(String error) {
        return new Discharge(Outcome.RETRY, null, error);
    }
}
