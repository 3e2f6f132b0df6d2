package io.handoff.gateway.orchestration;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The routes' admission queues as metrics: how many requests wait now, per route, and how long each waited, by how
 * its wait ended. Tags stay bounded (routes and outcomes are finite sets); each timer is looked up once and kept.
 */
@ApplicationScoped
public class AdmissionMetrics {

    /** How a wait in the queue ended. */
    enum Outcome {
        /** A slot freed and the request took it. */
        ADMITTED,
        /** The route's {@code queue.timeout} passed first: refused OVERLOADED. */
        TIMEOUT,
        /** The client went away while it waited. */
        CANCELLED,
        /** The queue was full when the request came: refused OVERLOADED at once, with no wait. */
        FULL,
        /** Its turn came but another step refused it (the route out of service, the request id running, a drain). */
        REFUSED;

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The wait histogram's buckets: fixed, so that dashboards can take quantiles across replicas, from a slot that
     * frees at once to the longest timeout an operator is likely to set.
     */
    static final Duration[] WAIT_BUCKETS = {Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100),
            Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
            Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

    private final MeterRegistry registry;
    private final Map<String, Timer> waits = new ConcurrentHashMap<>();
    private final Map<String, List<Supplier<Number>>> depths = new ConcurrentHashMap<>();

    public AdmissionMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Counts {@code depth} in the gauge of the requests waiting in a route's queue, read when scraped. A route
     * replaced by a reload has a queue of the new route besides the old one's until the old one is {@link #forget
     * forgotten}: the gauge is their sum.
     */
    void depth(String route, Supplier<Number> depth) {
        depths.computeIfAbsent(route, r -> {
            List<Supplier<Number>> queues = new CopyOnWriteArrayList<>();
            Gauge.builder("handoff.admission.queue.depth", queues,
                    q -> q.stream().mapToDouble(s -> s.get().doubleValue()).sum()).tag("route", r)
                    .strongReference(true)
                    .description("Requests waiting in the route's admission queue for a slot").register(registry);
            return queues;
        }).add(depth);
    }

    /** A queue of a route no longer serving: its waiters no longer count. */
    void forget(String route, Supplier<Number> depth) {
        List<Supplier<Number>> queues = depths.get(route);
        if (queues != null) {
            queues.remove(depth);
        }
    }

    /** One wait that ended, however long it was ({@link Outcome#FULL} waits not at all). */
    void waited(String route, Outcome outcome, Duration waited) {
        waits.computeIfAbsent(route + '\n' + outcome.tag(), k -> Timer.builder("handoff.admission.queue.wait")
                .tags("route", route, "outcome", outcome.tag())
                .description("Time a Generate waited in its route's admission queue, by how the wait ended")
                .serviceLevelObjectives(WAIT_BUCKETS).register(registry)).record(waited);
    }
}
