package io.handoff.gateway.control;

import io.handoff.gateway.routing.EndpointBreaker;
import io.handoff.gateway.routing.EndpointPool;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The control plane as metrics: endpoint health and native load as last sampled, what negotiation found wrong,
 * Health answers, aborts and the drain. Every tag set is bounded by configuration (routes, pools, endpoints) or by
 * a fixed vocabulary (states, figures the connectors read, abort targets and statuses). Gauges read values kept in
 * memory: a scrape never reaches an engine or the store.
 */
@ApplicationScoped
public class ControlMetrics {

    private final MeterRegistry registry;
    private final Map<Tags, AtomicLong> endpointUp = new ConcurrentHashMap<>();
    private final Map<Tags, BreakerGauges> breakers = new ConcurrentHashMap<>();
    private final Map<Tags, double[]> endpointLoad = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> drain = new ConcurrentHashMap<>();
    private final Map<String, List<Gauge>> poolGauges = new ConcurrentHashMap<>();

    public ControlMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Whether an endpoint's breaker admits traffic, after the latest sample. */
    public void endpointUp(String route, String pool, String endpoint, boolean up) {
        Tags tags = Tags.of("route", route, "pool", pool, "endpoint", endpoint);
        endpointUp.computeIfAbsent(tags, t -> {
            AtomicLong value = new AtomicLong();
            Gauge.builder("handoff.endpoint.up", value, AtomicLong::get).tags(t)
                    .description("1 when the endpoint takes traffic (breaker closed), 0 when it is down")
                    .register(registry);
            return value;
        }).set(up ? 1 : 0);
    }

    /**
     * An endpoint's breaker state, after the latest sample, as one series per state ({@code closed}, {@code open},
     * {@code probing}), 1 for the state it is in and 0 for the others: the way Prometheus exports an enumeration
     * (as kube-state-metrics does a pod's phase), so that a query selects a state by its label rather than by a
     * number whose meaning it has to know. Three series per endpoint, a bounded set.
     */
    public void endpointBreaker(String route, String pool, String endpoint, EndpointBreaker.State state) {
        Tags tags = Tags.of("route", route, "pool", pool, "endpoint", endpoint);
        breakers.computeIfAbsent(tags, this::breakerGauges).current.set(state);
    }

    /** The gauges of one endpoint's breaker: each reads the one state kept for the endpoint when scraped. */
    private record BreakerGauges(AtomicReference<EndpointBreaker.State> current, List<Gauge> gauges) {
    }

    private BreakerGauges breakerGauges(Tags tags) {
        AtomicReference<EndpointBreaker.State> current = new AtomicReference<>(EndpointBreaker.State.CLOSED);
        List<Gauge> gauges = new ArrayList<>();
        for (EndpointBreaker.State state : EndpointBreaker.State.values()) {
            gauges.add(Gauge.builder("handoff.endpoint.breaker.state", current, c -> c.get() == state ? 1 : 0)
                    .tags(tags).tag("state", state.name().toLowerCase(Locale.ROOT))
                    .description("1 for the state the endpoint's circuit breaker is in (closed, open, probing), "
                            + "0 for the others, after the latest sample")
                    .register(registry));
        }
        return new BreakerGauges(current, List.copyOf(gauges));
    }

    /** One native load figure an endpoint reported in the latest sample (running_requests, kv_usage, ...). */
    public void endpointLoad(String route, String pool, String endpoint, String figure, double value) {
        Tags tags = Tags.of("route", route, "pool", pool, "endpoint", endpoint, "figure", figure);
        endpointLoad.computeIfAbsent(tags, t -> {
            double[] holder = new double[1];
            Gauge.builder("handoff.endpoint.load", holder, h -> h[0]).tags(t)
                    .description("A load figure the engine reports on its native surface, as last sampled")
                    .register(registry);
            return holder;
        })[0] = value;
    }

    /** How many endpoints a pool has now, active (taking new legs) and retired (finishing legs, owed cleanup). */
    public void poolGauges(String route, String pool, Supplier<Optional<EndpointPool>> members) {
        poolGauges.computeIfAbsent(route + '\u0000' + pool, k -> List.of(
                poolGauge(route, pool, "active", () -> members.get().map(m -> m.membership().active().size())),
                poolGauge(route, pool, "retired", () -> members.get().map(m -> m.membership().retired().size()))));
    }

    /**
     * The gauges of a route's pools read the route serving under that name when scraped, never a pool object: a
     * reload that replaces the route is followed, one that removes it takes the gauges away.
     */
    private Gauge poolGauge(String route, String pool, String state, Supplier<Optional<Integer>> count) {
        return Gauge.builder("handoff.pool.endpoints", count, c -> c.get().orElse(0))
                .tags("route", route, "pool", pool, "state", state).strongReference(true)
                .description("Endpoints in a route's pool, by state: active ones take new legs, retired ones do not")
                .register(registry);
    }

    /** Takes away the gauges of a route that no longer serves: its pools' sizes and its endpoints' health. */
    public void forgetRoute(String route) {
        for (String pool : List.of("prefill", "decode")) {
            List<Gauge> gauges = poolGauges.remove(route + '\u0000' + pool);
            if (gauges != null) {
                gauges.forEach(registry::remove);
            }
        }
        endpointUp.keySet().removeIf(tags -> forget(tags, "handoff.endpoint.up", route));
        endpointLoad.keySet().removeIf(tags -> forget(tags, "handoff.endpoint.load", route));
        forgetBreakers(Tags.of("route", route));
    }

    /** Takes away the gauges of one endpoint a pool let go: its health, its breaker and its load figures. */
    public void forgetEndpoint(String route, String pool, String endpoint) {
        Tags of = Tags.of("route", route, "pool", pool, "endpoint", endpoint);
        endpointUp.keySet().removeIf(tags -> forget(tags, "handoff.endpoint.up", of));
        endpointLoad.keySet().removeIf(tags -> forget(tags, "handoff.endpoint.load", of));
        forgetBreakers(of);
    }

    /** Removes the breaker gauges of every endpoint whose tags include every tag of {@code of}. */
    private void forgetBreakers(Tags of) {
        breakers.entrySet().removeIf(e -> {
            boolean matches = includes(e.getKey(), of);
            if (matches) {
                e.getValue().gauges().forEach(registry::remove);
            }
            return matches;
        });
    }

    private static boolean includes(Tags tags, Tags of) {
        return of.stream().allMatch(wanted -> tags.stream().anyMatch(t -> t.equals(wanted)));
    }

    private boolean forget(Tags tags, String gauge, String route) {
        return forget(tags, gauge, Tags.of("route", route));
    }

    /** Removes the gauge of {@code tags} when they include every tag of {@code of}; answers whether it did. */
    private boolean forget(Tags tags, String gauge, Tags of) {
        boolean matches = includes(tags, of);
        if (matches) {
            Gauge meter = registry.find(gauge).tags(tags).gauge();
            if (meter != null) {
                registry.remove(meter);
            }
        }
        return matches;
    }

    /** An endpoint found answering as the wrong role or not serving the route's model. */
    public void mismatch(String route, String pool, String kind) {
        registry.counter("handoff.negotiation.mismatches", "route", route, "pool", pool, "kind", kind).increment();
    }

    /** The age of the latest fleet sample and the session counts it found. */
    public void sampleGauges(Supplier<Double> ageSeconds, Supplier<Long> activeKvSessions, Supplier<Long> engineHeld) {
        Gauge.builder("handoff.fleet.sample.age", ageSeconds, s -> s.get()).baseUnit("seconds")
                .description("How old the latest sample of the engines' native surfaces is").strongReference(true)
                .register(registry);
        Gauge.builder("handoff.sessions.active.kv", activeKvSessions, s -> s.get())
                .description("Live sessions plus ended sessions whose KV an engine may still hold (latest sample)")
                .strongReference(true).register(registry);
        Gauge.builder("handoff.sessions.engine.held", engineHeld, s -> s.get())
                .description("Ended sessions whose KV an engine may still hold (latest sample)")
                .strongReference(true).register(registry);
    }

    public void healthAnswered(String state) {
        registry.counter("handoff.health.answers", "state", state).increment();
    }

    public void aborted(String target, String status) {
        registry.counter("handoff.aborts", "target", target, "status", status).increment();
    }

    /** Drain figures: {@code active} (1 while draining), {@code live} and {@code engine_held} sessions remaining. */
    public void drain(String figure, long value) {
        drain.computeIfAbsent(figure, f -> {
            AtomicLong holder = new AtomicLong();
            Gauge.builder("handoff.drain", holder, AtomicLong::get).tag("figure", f)
                    .description("The drain: active (1 while the deployment drains), live and engine_held sessions "
                            + "that remain")
                    .register(registry);
            return holder;
        }).set(value);
    }
}
