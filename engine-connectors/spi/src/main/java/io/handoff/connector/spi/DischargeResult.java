package io.handoff.connector.spi;

import java.time.Instant;

/**
 * What a connector answered when asked to discharge held KV.
 *
 * @param outcome   what happened
 * @param heldUntil for {@link Outcome#ENGINE_HOLDS}: when the engine's own timer frees the resource
 * @param error     for {@link Outcome#RETRY}: why it failed
 */
public record DischargeResult(Outcome outcome, Instant heldUntil, String error) {

    public enum Outcome {
        /** The engine freed the resource (or confirmed it no longer holds it). */
        RELEASED,
        /** The engine cannot free it early; it holds it until {@code heldUntil} and then frees it itself. */
        ENGINE_HOLDS,
        /** Transient failure: try again later. */
        RETRY
    }

    public static DischargeResult released() {
        return new DischargeResult(Outcome.RELEASED, null, null);
    }

    public static DischargeResult engineHoldsUntil(Instant until) {
        return new DischargeResult(Outcome.ENGINE_HOLDS, until, null);
    }

    public static DischargeResult retry(String error) {
        return new DischargeResult(Outcome.RETRY, null, error);
    }
}
