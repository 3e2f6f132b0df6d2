package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

import java.time.Duration;

/**
 * The route's time limits on a leg, the same for every kind of run. A leg that times out fails inside its own span
 * (an error there, not a cancel) with a failure that says it reached the engine, so its cleanup is owed.
 */
final class LegLimits {

    private LegLimits() {
    }

    /** A decode stream may be silent for {@code idle}, before its first event and between events. */
    static Multi<GenerateResponse> idle(Multi<GenerateResponse> decode, Duration idle, Vertx vertx) {
        return EndableStream.failWhenSilent(decode, idle, () -> EngineException.sentRetryable(
                ErrorCode.ERROR_CODE_INTERNAL, "the decode stream was silent for " + idle.toMillis() + " ms"), vertx);
    }

    /** A prefill must park its KV (or finish) within {@code timeout}. */
    static <T> Uni<T> parkWithin(Uni<T> prefill, Duration timeout) {
        return prefill.ifNoItem().after(timeout).failWith(() -> EngineException.sentRetryable(
                ErrorCode.ERROR_CODE_OVERLOADED,
                "the prefill did not park its KV within " + timeout.toMillis() + " ms"));
    }
}
