package io.handoff.gateway.control;

import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.routing.EndpointLetGo;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.EndpointVerdict;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RoutesSwapped;
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
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Samples the fleet off the hot path: every endpoint's native discovery and load surface (through its connector's
 * probe, judged by {@link EndpointVerdict}, under the pool's probe guard: a timeout, and one more try of a lost probe)
 * and the store's session counts, on a Vert.x timer, into a cache stamped
 * with the injected clock. GetLoad, Health and the metrics read the cache; nothing a client sends ever waits for an
 * engine's metrics.
 *
 * <p>The first sample runs when the gateway starts: it is the observed half of negotiation (the configured half is
 * {@code RouteFactory}). An endpoint that answers as the wrong role or does not serve the route's model is tripped
 * with a message saying so, and stays out while later samples find the same; an endpoint that merely does not answer
 * counts as one failure against its breaker (which opens at its threshold), and never stops the start. A healthy sample closes a breaker once its open period has passed.
 */
@ApplicationScoped
public class FleetSampler {

    private static final Logger LOG = Logger.getLogger(FleetSampler.class);

    /** One endpoint as last sampled. */
    public record EndpointSample(String route, String pool, PooledEndpoint member, EndpointStatus status,
            Instant sampledAt) {
    }

    /** The store's sessions as last sampled; {@code error} is non-null when the last attempt failed. */
    public record SessionCounts(Map<SessionState, Long> byState, long engineHeld, Instant sampledAt, String error) {

        public long live() {
            return byState.entrySet().stream().filter(e -> e.getKey().isLive()).mapToLong(Map.Entry::getValue).sum();
        }

        /** Live sessions plus ended ones whose KV an engine may still hold. */
        public long activeKv() {
            return live() + engineHeld;
        }
    }

    private final RouteRegistry routes;
    private final SessionStore store;
    private final Clock clock;
    private final Vertx vertx;
    private final DiscoveryConfig config;
    private final ControlMetrics metrics;
    private final Map<String, EndpointSample> samples = new ConcurrentHashMap<>();
    private final Map<String, String> mismatches = new ConcurrentHashMap<>();
    private final AtomicBoolean sampling = new AtomicBoolean();
    private volatile SessionCounts sessions;
    private volatile Instant lastSample;
    private volatile long timer = -1;

    public FleetSampler(RouteRegistry routes, SessionStore store, Clock clock, Vertx vertx, DiscoveryConfig config,
            ControlMetrics metrics) {
        this.routes = routes;
        this.store = store;
        this.clock = clock;
        this.vertx = vertx;
        this.config = config;
        this.metrics = metrics;
        metrics.sampleGauges(
                () -> lastSample == null ? Double.NaN
                        : Duration.between(lastSample, clock.instant()).toMillis() / 1000.0,
                () -> sessions == null ? 0L : sessions.activeKv(),
                () -> sessions == null ? 0L : sessions.engineHeld());
        routes.all().forEach(this::poolGauges);
    }

    private void poolGauges(Route route) {
        String name = route.name();
        metrics.poolGauges(name, "prefill", () -> routes.named(name).map(Route::prefill));
        metrics.poolGauges(name, "decode", () -> routes.named(name).map(Route::decode));
    }

    /**
     * Follows a reload: what was kept of a route taken out or replaced (its samples, verdicts and gauges) goes, and
     * every route the reload made is sampled at once, as the routes are at start: the observed half of negotiation.
     */
    void swapped(@Observes RoutesSwapped swap) {
        for (Route old : swap.previous().all()) {
            if (!swap.serves(old)) {
                String prefix = old.name() + '\u0000';
                samples.keySet().removeIf(k -> k.startsWith(prefix));
                mismatches.keySet().removeIf(k -> k.startsWith(prefix));
                metrics.forgetRoute(old.name());
            }
        }
        for (Route route : swap.current().all()) {
            poolGauges(route);
            if (swap.previous().named(route.name()).filter(r -> r == route).isEmpty()) {
                Uni.join().all(sample(route, "prefill", route.prefill()), sample(route, "decode", route.decode()))
                        .andCollectFailures().subscribe().with(ok -> LOG.debugf("route %s sampled", route.name()),
                                f -> LOG.warnf("sampling route %s failed: %s", route.name(), f.getMessage()));
            }
        }
    }

    void start(@Observes StartupEvent event) {
        sampleNow().subscribe().with(ok -> LOG.debugf("first fleet sample done"),
                f -> LOG.warnf("first fleet sample failed: %s", f.getMessage()));
        if (config.samplingEnabled()) {
            timer = vertx.setPeriodic(config.samplePeriod().toMillis(), id -> {
                if (sampling.compareAndSet(false, true)) {
                    sampleNow().onTermination().invoke(() -> sampling.set(false))
                            .subscribe().with(ok -> {
                            }, f -> LOG.debugf("fleet sample failed: %s", f.getMessage()));
                }
            });
        }
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    /** Samples every endpoint and the store now; completes when all answered or timed out. Never fails. */
    public Uni<Void> sampleNow() {
        List<Uni<Void>> steps = new ArrayList<>();
        for (Route route : routes.all()) {
            steps.add(sample(route, "prefill", route.prefill()));
            steps.add(sample(route, "decode", route.decode()));
        }
        steps.add(sampleStore());
        return Uni.join().all(steps).andCollectFailures().onFailure().recoverWithNull()
                .invoke(() -> lastSample = clock.instant()).replaceWithVoid();
    }

    private Uni<Void> sample(Route route, String pool, EndpointPool members) {
        List<Uni<Void>> probes = new ArrayList<>();
        for (PooledEndpoint member : members.members()) {
            probes.add(sample(route, pool, members, member).replaceWithVoid());
        }
        return probes.isEmpty() ? Uni.createFrom().voidItem()
                : Uni.join().all(probes).andCollectFailures().replaceWithVoid();
    }

    /**
     * Samples one endpoint now, as the first sample does at start: an endpoint that joins a pool while the gateway
     * serves gets the same observed half of negotiation. Never fails.
     */
    public Uni<EndpointSample> sample(Route route, String pool, EndpointPool members, PooledEndpoint member) {
        return members.probe(member).map(status -> record(route, pool, member, status));
    }

    private EndpointSample record(Route route, String pool, PooledEndpoint member, EndpointStatus status) {
        String key = key(route.name(), pool, member.endpoint().name());
        EndpointSample sample = new EndpointSample(route.name(), pool, member, status, clock.instant());
        member.observed(status);
        if (routes.named(route.name()).filter(r -> r == route).isEmpty()) {
            // a probe that answered after a reload took its route out: what it found is the old route's alone
            return sample;
        }
        samples.put(key, sample);
        if (status.healthy()) {
            if (member.breaker().takeProbe()) {
                member.breaker().probed(true, status.detail());
            }
            if (mismatches.remove(key) != null) {
                LOG.infof("route %s: %s endpoint %s now answers as the route expects", route.name(), pool,
                        member.endpoint().name());
            }
        } else {
            Optional<String> kind = EndpointVerdict.kindOf(status.detail());
            if (kind.isPresent()) {
                member.breaker().trip(status.detail());
            } else {
                // a probe that failed once (a slow answer on a loaded host) is one failure, not a verdict: the
                // breaker opens after its threshold, as for failed legs
                member.breaker().failed(status.detail());
            }
            if (kind.isPresent() && !kind.get().equals(mismatches.put(key, kind.get()))) {
                metrics.mismatch(route.name(), pool, kind.get());
                LOG.errorf("route %s: %s endpoint %s is marked unhealthy: %s", route.name(), pool,
                        member.endpoint().name(), status.detail());
            } else if (kind.isEmpty()) {
                mismatches.remove(key);
            }
        }
        metrics.endpointUp(route.name(), pool, member.endpoint().name(), member.breaker().admits());
        metrics.endpointBreaker(route.name(), pool, member.endpoint().name(), member.breaker().state());
        status.load().forEach((figure, value) -> metrics.endpointLoad(route.name(), pool, member.endpoint().name(),
                figure, value));
        return sample;
    }

    private Uni<Void> sampleStore() {
        Instant now = clock.instant();
        return Uni.combine().all().unis(store.countByState(), store.countEngineHeld(now)).asTuple()
                .ifNoItem().after(config.storeTimeout()).fail()
                .invoke(t -> sessions = new SessionCounts(Map.copyOf(t.getItem1()), t.getItem2(), now, null))
                .onFailure().invoke(f -> {
                    SessionCounts previous = sessions;
                    sessions = previous == null
                            ? new SessionCounts(Map.of(), 0, now, String.valueOf(f.getMessage()))
                            : new SessionCounts(previous.byState(), previous.engineHeld(), previous.sampledAt(),
                                    String.valueOf(f.getMessage()));
                })
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    /** Forgets a retired endpoint's sample: it takes no traffic, so its gauge says down, whatever it last said. */
    public void retired(Route route, String pool, PooledEndpoint member) {
        String key = key(route.name(), pool, member.endpoint().name());
        samples.remove(key);
        mismatches.remove(key);
        metrics.endpointUp(route.name(), pool, member.endpoint().name(), false);
        metrics.endpointBreaker(route.name(), pool, member.endpoint().name(), member.breaker().state());
    }

    /**
     * Follows a retired endpoint let go: its gauges go, unless its name joined the pool again since (then its samples
     * set them anew).
     */
    void letGo(@Observes EndpointLetGo gone) {
        Route route = gone.route();
        if (PoolMembership.pool(route, gone.pool()).member(gone.endpoint()).isPresent()) {
            return;
        }
        String key = key(route.name(), gone.pool(), gone.endpoint());
        samples.remove(key);
        mismatches.remove(key);
        metrics.forgetEndpoint(route.name(), gone.pool(), gone.endpoint());
    }

    /** Every endpoint's latest sample, in route and pool order. */
    public List<EndpointSample> samples() {
        List<EndpointSample> out = new ArrayList<>();
        for (Route route : routes.all()) {
            for (String pool : List.of("prefill", "decode")) {
                EndpointPool members = pool.equals("prefill") ? route.prefill() : route.decode();
                for (PooledEndpoint m : members.members()) {
                    EndpointSample s = samples.get(key(route.name(), pool, m.endpoint().name()));
                    if (s != null) {
                        out.add(s);
                    }
                }
            }
        }
        return Collections.unmodifiableList(out);
    }

    public Optional<EndpointSample> sample(String route, String pool, String endpoint) {
        return Optional.ofNullable(samples.get(key(route, pool, endpoint)));
    }

    /** The store's sessions as last sampled; empty before the first sample. */
    public Optional<SessionCounts> sessions() {
        return Optional.ofNullable(sessions);
    }

    /** When the latest complete sample ended; empty before the first. */
    public Optional<Instant> lastSample() {
        return Optional.ofNullable(lastSample);
    }

    private static String key(String route, String pool, String endpoint) {
        return route + '\u0000' + pool + '\u0000' + endpoint;
    }
}
