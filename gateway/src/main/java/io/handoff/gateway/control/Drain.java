package io.handoff.gateway.control;

import io.handoff.gateway.orchestration.LiveRequests;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * The drain of the whole deployment. Starting it puts a mark in the session store; every replica reads the mark
 * every {@code handoff.discovery.drain-poll} into its {@link DrainState}, and from then on refuses new Generates
 * (EngineError code DRAINING, gRPC UNAVAILABLE) and new allocations, while renewals, releases, lookups and the
 * requests already running go on. Sessions end as they would (complete, released, expired); the drain is complete
 * when no session is live, no engine may still hold KV for an ended one, and this replica runs nothing. The mark
 * stays until the drain is stopped, so a complete drain keeps refusing work until the operator resumes or stops the
 * deployment.
 */
@ApplicationScoped
public class Drain {

    private static final Logger LOG = Logger.getLogger(Drain.class);

    /**
     * Where a drain stands.
     *
     * @param draining    whether the deployment drains
     * @param since       since when, when it does
     * @param byState     sessions in the store by state, over every replica
     * @param live        sessions not yet ended (ALLOCATED, READY, ATTACHED)
     * @param engineHeld  ended sessions whose KV an engine may still hold
     * @param runningHere Generates this replica still runs
     * @param complete    draining and nothing remains
     */
    public record Progress(boolean draining, Optional<Instant> since, Map<SessionState, Long> byState, long live,
            long engineHeld, int runningHere, boolean complete) {

        public long allocated() {
            return byState.getOrDefault(SessionState.ALLOCATED, 0L);
        }
    }

    private final SessionStore store;
    private final DrainState state;
    private final Clock clock;
    private final Vertx vertx;
    private final DiscoveryConfig config;
    private final ControlMetrics metrics;
    private final LiveRequests live;
    private volatile long timer = -1;

    public Drain(SessionStore store, DrainState state, Clock clock, Vertx vertx, DiscoveryConfig config,
            ControlMetrics metrics, LiveRequests live) {
        this.store = store;
        this.state = state;
        this.clock = clock;
        this.vertx = vertx;
        this.config = config;
        this.metrics = metrics;
        this.live = live;
    }

    void start(@Observes StartupEvent event) {
        follow();
        timer = vertx.setPeriodic(config.drainPoll().toMillis(), id -> follow());
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void follow() {
        refresh().subscribe().with(ok -> {
        }, f -> LOG.debugf("reading the drain mark failed, keeping what this replica knew: %s", f.getMessage()));
    }

    /** Reads the store's drain mark into this replica's {@link DrainState}. */
    public Uni<Void> refresh() {
        return Uni.createFrom().deferred(() -> {
            long ticket = state.readSent();
            return store.drainingSince().ifNoItem().after(config.storeTimeout()).fail()
                    .invoke(since -> answered(ticket, since));
        }).replaceWithVoid();
    }

    private void answered(long ticket, Optional<Instant> since) {
        boolean was = state.draining();
        if (state.readAnswered(ticket, since.orElse(null)) && was != state.draining()) {
            LOG.infof(state.draining() ? "the deployment drains since %s: no new Generate or allocation"
                    : "the drain was stopped: new work is taken again", since.orElse(null));
        }
        metrics.drain("active", state.draining() ? 1 : 0);
    }

    /** Starts the drain (a drain already running keeps its start) and answers its progress. */
    public Uni<Progress> begin() {
        return store.startDrain(clock.instant()).ifNoItem().after(config.storeTimeout()).fail()
                .invoke(since -> {
                    state.set(since);
                    metrics.drain("active", 1);
                    LOG.infof("drain started (since %s): no new Generate or allocation on any replica", since);
                })
                .chain(this::progress);
    }

    /** Stops the drain: every replica takes new work again within one poll. */
    public Uni<Progress> end() {
        return store.stopDrain().ifNoItem().after(config.storeTimeout()).fail()
                .invoke(() -> {
                    state.set(null);
                    metrics.drain("active", 0);
                    LOG.info("drain stopped: new work is taken again");
                })
                .chain(this::progress);
    }

    /** The drain as it stands now, counted from the store. */
    public Uni<Progress> progress() {
        Instant now = clock.instant();
        return refresh().chain(() -> Uni.combine().all().unis(store.countByState(), store.countEngineHeld(now))
                .asTuple().ifNoItem().after(config.storeTimeout()).fail())
                .map(t -> {
                    Map<SessionState, Long> byState = t.getItem1();
                    long liveSessions = byState.entrySet().stream().filter(e -> e.getKey().isLive())
                            .mapToLong(Map.Entry::getValue).sum();
                    int running = live.size();
                    boolean draining = state.draining();
                    metrics.drain("live", liveSessions);
                    metrics.drain("engine_held", t.getItem2());
                    return new Progress(draining, state.since(), Map.copyOf(byState), liveSessions, t.getItem2(),
                            running, draining && liveSessions == 0 && t.getItem2() == 0 && running == 0);
                });
    }
}
