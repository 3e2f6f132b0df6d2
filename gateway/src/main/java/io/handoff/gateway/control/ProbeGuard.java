package io.handoff.gateway.control;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.routing.EndpointVerdict;
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
 * One endpoint's probe in a fleet sample, guarded with SmallRye Fault Tolerance: each try is cut off after
 * {@code handoff.discovery.probe-timeout}, and a lost probe is tried again {@code probe-retries} times (one by
 * default) after {@code probe-retry-delay}, spread by {@code probe-retry-jitter}, so that one lost probe does not
 * count against an endpoint's breaker nor mark it out in Health. A probe is lost when it did not answer in time or
 * came back unhealthy for a reason that is not a verdict ({@link EndpointVerdict}): an endpoint that answers as the
 * wrong role or without the route's model says so again on a second try, and is not asked twice.
 */
final class ProbeGuard {

    private final TypedGuard<Uni<EndpointStatus>> guard;
    private final Duration timeout;

    ProbeGuard(DiscoveryConfig config) {
        this.timeout = config.probeTimeout();
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("handoff.discovery.probe-timeout must be positive, was " + timeout);
        }
        if (config.probeRetries() < 0) {
            throw new IllegalArgumentException("handoff.discovery.probe-retries must be 0 or more, was "
                    + config.probeRetries());
        }
        if (config.probeRetryDelay().isNegative() || config.probeRetryJitter().isNegative()) {
            throw new IllegalArgumentException("handoff.discovery.probe-retry-delay and probe-retry-jitter may not be"
                    + " negative");
        }
        this.guard = TypedGuard.create(new TypeLiteral<Uni<EndpointStatus>>() {
        })
                .withDescription("endpoint probe")
                .withTimeout().duration(timeout.toMillis(), ChronoUnit.MILLIS).done()
                .withRetry().maxRetries(config.probeRetries())
                .delay(config.probeRetryDelay().toMillis(), ChronoUnit.MILLIS)
                .jitter(config.probeRetryJitter().toMillis(), ChronoUnit.MILLIS)
                .done()
                .build();
    }

    /** Runs {@code probe} (one probe of {@code endpoint}'s surfaces per try) under the guard. Never fails. */
    Uni<EndpointStatus> probe(Endpoint endpoint, Supplier<Uni<EndpointStatus>> probe) {
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
