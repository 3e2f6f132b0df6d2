package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.util.TypeLiteral;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * One probe of one endpoint, guarded with SmallRye Fault Tolerance: each try is cut off after
 * {@code handoff.discovery.probe-timeout}, and a lost probe is tried again {@code probe-retries} times (one by
 * default) after {@code probe-retry-delay}, spread by {@code probe-retry-jitter}. A probe is lost when it did not
 * answer in time or came back unhealthy for a reason that is not a verdict ({@link EndpointVerdict}): an endpoint
 * that answers as the wrong role or without the route's model says so again on a second try, and is not asked twice.
 *
 * <p>Every probe a pool runs goes through its guard ({@link EndpointPool#probe}): a fleet sample's, where one lost
 * probe would count against the endpoint's breaker and mark it out in Health, and an open breaker's recovery probe,
 * where one lost probe would keep the endpoint out for another whole open period, and a probe that never answered would
 * leave the breaker probing, and the endpoint out, for as long as it did not. The guard holds no state between calls
 * (no bulkhead, no circuit breaker), so one is shared by every pool of the replica.
 */
final class ProbeGuard implements ProbeRunner {

    private final TypedGuard<Uni<EndpointStatus>> guard;
    private final Duration timeout;

    ProbeGuard(ProbeConfig config) {
        this(config.probeTimeout(), config.probeRetries(), config.probeRetryDelay(), config.probeRetryJitter());
    }

    ProbeGuard(Duration timeout, int retries, Duration retryDelay, Duration retryJitter) {
        this.timeout = timeout;
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("handoff.discovery.probe-timeout must be positive, was " + timeout);
        }
        if (retries < 0) {
            throw new IllegalArgumentException("handoff.discovery.probe-retries must be 0 or more, was " + retries);
        }
        if (retryDelay.isNegative() || retryJitter.isNegative()) {
            throw new IllegalArgumentException("handoff.discovery.probe-retry-delay and probe-retry-jitter may not be"
                    + " negative");
        }
        this.guard = TypedGuard.create(new TypeLiteral<Uni<EndpointStatus>>() {
        })
                .withDescription("endpoint probe")
                .withTimeout().duration(timeout.toMillis(), ChronoUnit.MILLIS).done()
                .withRetry().maxRetries(retries)
                .delay(retryDelay.toMillis(), ChronoUnit.MILLIS)
                .jitter(retryJitter.toMillis(), ChronoUnit.MILLIS)
                .done()
                .build();
    }

    /** Runs {@code probe} (one probe of {@code endpoint}'s surfaces per try) under the guard. Never fails. */
    @Override
    public Uni<EndpointStatus> probe(Endpoint endpoint, Supplier<Uni<EndpointStatus>> probe) {
        return guard.get(() -> Uni.createFrom().deferred(probe::get).onItem().transformToUni(status -> lost(status)
                        ? Uni.createFrom().failure(new LostProbe(status))
                        : Uni.createFrom().item(status)))
                .onFailure().recoverWithItem(f -> lastAnswer(endpoint, f));
    }

    private static boolean lost(EndpointStatus status) {
        return !status.healthy() && EndpointVerdict.kindOf(status.detail()).isEmpty();
    }

    private EndpointStatus lastAnswer(Endpoint endpoint, Throwable failure) {
        if (failure instanceof LostProbe lost) {
            return lost.status;
        }
        String why = failure instanceof TimeoutException
                ? "probe did not answer within " + timeout.toMillis() + " ms"
                : "probe failed: " + failure.getMessage();
        return new EndpointStatus(endpoint, false, Optional.empty(), List.of(), Optional.empty(), Map.of(), why);
    }

    /** A try that came back lost: the guard retries on it, and its status is kept for after the last try. */
    private static final class LostProbe extends RuntimeException {

        private final transient EndpointStatus status;

        LostProbe(EndpointStatus status) {
            super(status.detail(), null, false, false);
            this.status = status;
        }
    }
}
