package io.handoff.gateway.reaper;

import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore.DueEntry;
import io.handoff.gateway.session.store.SessionStore.ReapStep;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Finds sessions that are due (lease passed, cleanup unclaimed, tombstone past retention) and acts on each
 * through the store's fenced {@code reap} step, so that any number of replicas may sweep at once and each thing
 * happens once. Finding is a read of the index; acting decides again from the record itself.
 */
public class Reaper {

    private static final Logger LOG = Logger.getLogger(Reaper.class);
    private static final int BUCKETS_IN_FLIGHT = 8;

    private final SessionStore store;
    private final CleanupExecutor cleanup;
    private final Clock clock;
    private final SessionMetrics metrics;
    private final String replicaId;
    private final Duration claimTtl;
    private final int batchSize;
    private final HandoffTracing tracing;

    public Reaper(SessionStore store, CleanupExecutor cleanup, Clock clock, SessionMetrics metrics, String replicaId,
            Duration claimTtl, int batchSize, HandoffTracing tracing) {
        this.tracing = tracing;
        this.store = store;
        this.cleanup = cleanup;
        this.clock = clock;
        this.metrics = metrics;
        this.replicaId = replicaId;
        this.claimTtl = claimTtl;
        this.batchSize = batchSize;
    }

    /**
     * One pass over every bucket, as of the clock's current instant: the index is read at once, and the buckets'
     * entries are acted on {@value #BUCKETS_IN_FLIGHT} buckets at a time.
     */
    public Uni<SweepReport> sweep() {
        Instant now = clock.instant();
        return store.findDue(now, batchSize)
                .onFailure().invoke(f -> LOG.debugf("reaper could not read the due index: %s", f.getMessage()))
                .onFailure().recoverWithItem(List.of())
                .onItem().transformToMulti(buckets -> Multi.createFrom().iterable(buckets))
                .onItem().transformToMulti(this::actInTurn).merge(BUCKETS_IN_FLIGHT)
                .collect().in(SweepReport.Tally::new, SweepReport.Tally::add)
                .map(SweepReport.Tally::report)
                .invoke(report -> metrics.reaperSweep(report.acted()));
    }

    /** One bucket's entries, one after another. */
    private Multi<ReapStep.Kind> actInTurn(List<DueEntry> entries) {
        return Multi.createFrom().iterable(entries)
                .onItem().transformToUniAndConcatenate(entry -> Uni.createFrom().deferred(() -> act(entry,
                        clock.instant())));
    }

    /**
     * Acts on one entry as of {@code now}, read when it acts rather than when the sweep began: a bucket's entries are
     * acted on one after another, each discharge in turn, and a claim stamped with the sweep's start would run out
     * early by however long the sweep had taken, letting another replica take the cleanup over (and discharge again)
     * while this one is still at it. A later instant only makes a due entry more due.
     */
    private Uni<ReapStep.Kind> act(DueEntry entry, Instant now) {
        return store.reap(entry.sessionId(), now, replicaId, claimTtl)
                .flatMap(step -> {
                    switch (step.kind()) {
                        case EXPIRED:
                            metrics.transitioned(SessionState.EXPIRED);
                            metrics.reaperActed(Duration.between(entry.due(), now));
                            break;
                        case CLEANUP_CLAIMED:
                            metrics.reaperActed(Duration.between(entry.due(), now));
                            break;
                        default:
                            return Uni.createFrom().item(step.kind());
                    }
                    boolean expired = step.kind() == ReapStep.Kind.EXPIRED;
                    return tracing.reap(step.session(), expired, reapContext -> step.claim().isEmpty()
                            ? Uni.createFrom().item(step.kind())
                            : cleanup.discharge(step.session(), step.claim(), reapContext).replaceWith(step.kind()));
                })
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("reaper could not act on session %s: %s", entry.sessionId(), failure.getMessage());
                    return ReapStep.Kind.NOT_DUE;
                });
    }
}
