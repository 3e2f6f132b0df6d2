package io.handoff.gateway.session;

import io.handoff.gateway.session.store.SessionStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code handoff_sessions{state}}: sessions in the store by state, fleet-wide. Sampled on a timer, never on a
 * scrape, so a slow store cannot stall the metrics endpoint.
 */
@ApplicationScoped
public class SessionStateGauges {

    private final SessionStore store;
    private final Vertx vertx;
    private final Duration period;
    private final Map<SessionState, AtomicLong> values = new EnumMap<>(SessionState.class);

    public SessionStateGauges(SessionStore store, Vertx vertx, MeterRegistry registry,
            SessionMetricsConfig config) {
        this.store = store;
        this.vertx = vertx;
        this.period = config.stateSamplePeriod();
        for (SessionState state : SessionState.values()) {
            AtomicLong value = new AtomicLong();
            values.put(state, value);
            Gauge.builder("handoff.sessions", value, AtomicLong::get).tag("state", state.name())
                    .description("Sessions in the store by state, over all replicas").register(registry);
        }
    }

    void start(@Observes StartupEvent event) {
        sample();
        vertx.setPeriodic(period.toMillis(), id -> sample());
    }

    /** Refreshes the gauges now; completes when done. */
    public Uni<Void> refresh() {
        return store.countByState().invoke(counts -> counts.forEach((s, n) -> values.get(s).set(n))).replaceWithVoid();
    }

    private void sample() {
        refresh().subscribe().with(ok -> {
        }, failure -> {
        });
    }
}
