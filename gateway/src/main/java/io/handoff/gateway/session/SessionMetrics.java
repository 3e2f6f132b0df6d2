package io.handoff.gateway.session;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * The session lifecycle as metrics. Counters are per replica (Prometheus sums them); the per-state gauge is
 * fleet-wide, sampled from the store by {@link SessionStateGauges}.
 */
public final class SessionMetrics {

    private final Counter allocated;
    private final Counter idempotentReplays;
    private final Counter renewals;
    private final Map<SessionState, Counter> transitions = new EnumMap<>(SessionState.class);
    private final Counter expirations;
    private final Map<CleanupObligation.Status, Counter> cleanupOutcomes = new EnumMap<>(CleanupObligation.Status.class);
    private final Counter cleanupRetries;
    private final Counter cleanupClaimsLost;
    private final Timer reaperLag;
    private final DistributionSummary reaperBatch;

    public SessionMetrics(MeterRegistry registry) {
        allocated = Counter.builder("handoff.sessions.allocated").description("Sessions created").register(registry);
        idempotentReplays = Counter.builder("handoff.sessions.idempotent.replays")
                .description("Allocations answered with an existing session for the same idempotency key")
                .register(registry);
        renewals = Counter.builder("handoff.sessions.renewed")
                .description("Leases renewed (the lease keeper's and callers' renewals alike)").register(registry);
        for (SessionState state : SessionState.values()) {
            transitions.put(state, Counter.builder("handoff.session.transitions").tag("to", state.name())
                    .description("Session state transitions, by target state").register(registry));
        }
        expirations = Counter.builder("handoff.sessions.expired").description("Sessions whose lease ran out")
                .register(registry);
        for (CleanupObligation.Status status : CleanupObligation.Status.values()) {
            if (status != CleanupObligation.Status.PENDING) {
                cleanupOutcomes.put(status, Counter.builder("handoff.cleanup.outcomes").tag("outcome", status.name())
                        .description("Cleanup obligations settled, by outcome").register(registry));
            }
        }
        cleanupRetries = Counter.builder("handoff.cleanup.retries")
                .description("Discharge attempts that failed and will be retried").register(registry);
        cleanupClaimsLost = Counter.builder("handoff.cleanup.claims.lost")
                .description("Cleanup results dropped because another replica took over the claim").register(registry);
        reaperLag = Timer.builder("handoff.reaper.lag")
                .description("How late the reaper acted after a session became due").register(registry);
        reaperBatch = DistributionSummary.builder("handoff.reaper.batch")
                .description("Sessions acted on per reaper sweep").register(registry);
    }

    public void allocated(boolean created) {
        (created ? allocated : idempotentReplays).increment();
    }

    public void renewed() {
        renewals.increment();
    }

    public void transitioned(SessionState to) {
        transitions.get(to).increment();
        if (to == SessionState.EXPIRED) {
            expirations.increment();
        }
    }

    public void cleanupSettled(CleanupObligation.Status outcome) {
        Counter counter = cleanupOutcomes.get(outcome);
        if (counter != null) {
            counter.increment();
        }
    }

    public void cleanupRetry() {
        cleanupRetries.increment();
    }

    public void cleanupClaimLost() {
        cleanupClaimsLost.increment();
    }

    public void reaperActed(Duration lag) {
        reaperLag.record(lag.isNegative() ? Duration.ZERO : lag);
    }

    public void reaperSweep(int acted) {
        reaperBatch.record(acted);
    }
}
