package io.handoff.gateway.routing;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.reaper.ReaperConfig;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.util.TypeLiteral;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.function.Supplier;

/**
 * The one engine call of a discharge, guarded with SmallRye Fault Tolerance: each try is cut off after
 * {@code handoff.reaper.discharge-timeout}, and a try that did not discharge (the connector answered RETRY, as it does
 * for a dropped connection or a 5xx, or it failed or timed out) is tried again at once, up to
 * {@code discharge-retries} times, waiting {@code discharge-retry-delay} doubled each time up to
 * {@code discharge-retry-max-delay}, each wait spread by {@code discharge-retry-jitter}. What still fails then is
 * answered as {@link DischargeResult#retry} with the last try's reason, and the reaper's store-backed schedule takes
 * over: that schedule outlives this replica and is shared by every replica, which a retry in this process is not.
 * RELEASED and ENGINE_HOLDS are answers, never retried.
 *
 * <p>The immediate retries run under the cleanup claim, so all of them together are bounded by half the claim's
 * TTL, and one try by at most half of it again: a replica never keeps calling the engine once another replica may
 * have taken the claim over (and discharged the same KV).
 */
final class DischargeGuard {

    private final TypedGuard<Uni<DischargeResult>> guard;
    private final Duration timeout;

    DischargeGuard(ReaperConfig config) {
        this.timeout = positive("handoff.reaper.discharge-timeout", config.dischargeTimeout());
        int retries = config.dischargeRetries();
        if (retries < 0) {
            throw new IllegalArgumentException("handoff.reaper.discharge-retries must be 0 or more, was " + retries);
        }
        long delay = config.dischargeRetryDelay().toMillis();
        long maxDelay = config.dischargeRetryMaxDelay().toMillis();
        long jitter = config.dischargeRetryJitter().toMillis();
        long budget = config.claimTtl().toMillis() / 2;
        if (delay < 0 || jitter < 0) {
            throw new IllegalArgumentException("handoff.reaper.discharge-retry-delay and discharge-retry-jitter may not"
                    + " be negative");
        }
        if (maxDelay <= delay) {
            throw new IllegalArgumentException("handoff.reaper.discharge-retry-max-delay (" + maxDelay + " ms) must be"
                    + " longer than discharge-retry-delay (" + delay + " ms)");
        }
        if (timeout.toMillis() > budget) {
            // the last try may start just before the retries' half of the claim runs out, and must end within it
            throw new IllegalArgumentException("handoff.reaper.discharge-timeout (" + timeout.toMillis() + " ms) must"
                    + " be at most half of handoff.reaper.claim-ttl (" + budget + " ms): every try must end before"
                    + " the claim runs out and another replica may discharge the same KV again");
        }
        if (budget <= delay) {
            throw new IllegalArgumentException("handoff.reaper.discharge-retry-delay (" + delay + " ms) must be shorter"
                    + " than half of handoff.reaper.claim-ttl (" + budget + " ms), which bounds the immediate retries");
        }
        // SmallRye requires it too, but only when the guard first runs, failing the discharge call itself
        if (budget <= maxDelay) {
            throw new IllegalArgumentException("handoff.reaper.discharge-retry-max-delay (" + maxDelay + " ms) must be"
                    + " shorter than half of handoff.reaper.claim-ttl (" + budget + " ms), which bounds the immediate"
                    + " retries");
        }
        this.guard = TypedGuard.create(new TypeLiteral<Uni<DischargeResult>>() {
        })
                .withDescription("engine discharge call")
                .withTimeout().duration(timeout.toMillis(), ChronoUnit.MILLIS).done()
                .withRetry().maxRetries(retries)
                .delay(delay, ChronoUnit.MILLIS)
                .jitter(jitter, ChronoUnit.MILLIS)
                .maxDuration(budget, ChronoUnit.MILLIS)
                .withExponentialBackoff().factor(2).maxDelay(maxDelay, ChronoUnit.MILLIS).done()
                .done()
                .build();
    }

    /** Runs {@code call} (one engine call per try) under the guard; never fails, a call that did not succeed is RETRY. */
    Uni<DischargeResult> discharge(Supplier<Uni<DischargeResult>> call) {
        return guard.get(() -> Uni.createFrom().deferred(call::get).onItem().transformToUni(result ->
                result.outcome() == DischargeResult.Outcome.RETRY
                        ? Uni.createFrom().failure(new NotDischarged(result))
                        : Uni.createFrom().item(result)))
                .onFailure().recoverWithItem(this::lastReason);
    }

    private DischargeResult lastReason(Throwable failure) {
        if (failure instanceof NotDischarged n) {
            return n.result;
        }
        if (failure instanceof TimeoutException) {
            return DischargeResult.retry("the engine did not answer the discharge within " + timeout.toMillis() + " ms");
        }
        return DischargeResult.retry(String.valueOf(failure.getMessage()));
    }

    private static Duration positive(String key, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(key + " must be positive, was " + value);
        }
        return value;
    }

    /** A try the connector answered RETRY: the guard retries on it, and its answer is kept for after the last try. */
    private static final class NotDischarged extends RuntimeException {

        private final transient DischargeResult result;

        NotDischarged(DischargeResult result) {
            super(result.error(), null, false, false);
            this.result = result;
        }
    }
}
