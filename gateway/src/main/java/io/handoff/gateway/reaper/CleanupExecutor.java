package io.handoff.gateway.reaper;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.session.CleanupHandoff;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.store.SessionStore.CleanupClaim;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

/**
 * Discharges the obligations a replica has claimed, then writes the outcome back under the same claim token.
 * A replica that loses its claim (it stalled past the deadline and another took over) has its write refused.
 */
public class CleanupExecutor implements CleanupHandoff {

    private static final Logger LOG = Logger.getLogger(CleanupExecutor.class);

    private final SessionStore store;
    private final CleanupPort port;
    private final Clock clock;
    private final SessionMetrics metrics;
    private final int maxAttempts;
    private final Duration retryBackoff;
    private final Duration claimTtl;
    private final HandoffTracing tracing;

    public CleanupExecutor(SessionStore store, CleanupPort port, Clock clock, SessionMetrics metrics, int maxAttempts,
            Duration retryBackoff, Duration claimTtl, HandoffTracing tracing) {
        this.claimTtl = claimTtl;
        this.tracing = tracing;
        this.store = store;
        this.port = port;
        this.clock = clock;
        this.metrics = metrics;
        this.maxAttempts = maxAttempts;
        this.retryBackoff = retryBackoff;
    }

    @Override
    public Duration claimTtl() {
        return claimTtl;
    }

    @Override
    public void dischargeClaimed(Session session, CleanupClaim claim) {
        discharge(session, claim).subscribe().with(ok -> {
        }, failure -> LOG.warnf(failure, "cleanup of session %s left to the reaper", session.id()));
    }

    /** Discharges every claimed obligation; completes with whether the outcome was written back. */
    public Uni<Boolean> discharge(Session session, CleanupClaim claim) {
        return discharge(session, claim, null);
    }

    /**
     * {@link #discharge(Session, CleanupClaim)} as a {@code handoff.cleanup} span under {@code parent} (the reaper's
     * span), or a root span when null; linked to the trace of the request that allocated the session either way.
     */
    Uni<Boolean> discharge(Session session, CleanupClaim claim, Context parent) {
        return tracing.cleanup(session, parent, trace -> settleAll(session, claim, trace::settled)
                .flatMap(settled -> writeBack(session, claim, settled))
                .invoke(trace::written));
    }

    /**
     * Every obligation of the claim at once, not one after another: each engine call is bounded to fit in the
     * claim's TTL (see DischargeGuard), and in turn they would add up to several TTLs, past which another replica
     * takes the claim over and discharges the same KV again. An attempt never fails; it settles.
     */
    private Uni<List<CleanupObligation>> settleAll(Session session, CleanupClaim claim,
            Consumer<CleanupObligation> settled) {
        List<Uni<CleanupObligation>> attempts = claim.obligations().stream()
                .map(o -> attempt(session, o).invoke(settled))
                .toList();
        return attempts.isEmpty() ? Uni.createFrom().item(List.of()) : Uni.join().all(attempts).andFailFast();
    }

    private Uni<CleanupObligation> attempt(Session session, CleanupObligation o) {
        return Uni.createFrom().deferred(() -> port.discharge(session, o))
                .onFailure().recoverWithItem(failure -> DischargeResult.retry(String.valueOf(failure.getMessage())))
                .map(d -> settle(session, o, d));
    }

    private CleanupObligation settle(Session session, CleanupObligation o, DischargeResult d) {
        LOG.debugf("cleanup of session %s: obligation %s (%s on %s, %s): %s%s", session.id(), o.id(), o.resource(),
                o.endpoint(), o.handle(), d.outcome(), d.error() == null ? "" : " (" + d.error() + ")");
        CleanupObligation settled = switch (d.outcome()) {
            case RELEASED -> o.withOutcome(CleanupObligation.Status.DISCHARGED, o.heldUntil(), o.attempts(), null);
            case ENGINE_HOLDS -> o.withOutcome(CleanupObligation.Status.ENGINE_HELD,
                    d.heldUntil() != null ? d.heldUntil() : o.heldUntil(), o.attempts(), null);
            case RETRY -> o.attempts() + 1 >= maxAttempts
                    ? o.withOutcome(CleanupObligation.Status.ABANDONED, o.heldUntil(), o.attempts() + 1, d.error())
                    : o.withOutcome(CleanupObligation.Status.PENDING, o.heldUntil(), o.attempts() + 1, d.error());
        };
        if (settled.isPending()) {
            metrics.cleanupRetry();
        } else {
            metrics.cleanupSettled(settled.status());
        }
        return settled;
    }

    private Uni<Boolean> writeBack(Session session, CleanupClaim claim, List<CleanupObligation> settled) {
        Instant now = clock.instant();
        Instant keepUntil = settled.stream()
                .filter(o -> !o.isPending() && o.status() != CleanupObligation.Status.DISCHARGED)
                .map(CleanupObligation::heldUntil)
                .filter(t -> t != null)
                .max(Instant::compareTo)
                .orElse(null);
        return store.completeCleanup(session.id(), claim.token(), settled, now.plus(retryBackoff), keepUntil, now)
                .invoke(written -> {
                    if (!written) {
                        LOG.debugf("cleanup of session %s: claim %d lost before its outcome was written", session.id(),
                                claim.token());
                        metrics.cleanupClaimLost();
                    }
                });
    }
}
