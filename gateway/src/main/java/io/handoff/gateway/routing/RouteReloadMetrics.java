package io.handoff.gateway.routing;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.function.Supplier;

/**
 * Reloads of the routes as metrics: how many, by outcome ({@code applied}, {@code unchanged}, {@code refused}) and
 * source ({@code admin}, {@code file}); the generation of the table serving now; the retired routes still kept for
 * what they owe. And the retired endpoints of the serving routes let go once they owe nothing, by route and pool.
 */
@ApplicationScoped
public class RouteReloadMetrics {

    private final MeterRegistry registry;

    public RouteReloadMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void tables(Supplier<Number> generation, Supplier<Number> retired) {
        Gauge.builder("handoff.routes.generation", generation, g -> g.get().doubleValue()).strongReference(true)
                .description("The generation of the route table serving now: 1 at start, one more per applied reload")
                .register(registry);
        Gauge.builder("handoff.routes.retired", retired, r -> r.get().doubleValue()).strongReference(true)
                .description("Routes a reload took out that are kept until what runs on them and what they owe ends")
                .register(registry);
    }

    /** One retired endpoint of a route's pool let go ({@link RetiredEndpoints}). */
    void endpointPruned(String route, String pool) {
        Counter.builder("handoff.pool.endpoints.pruned").tags("route", route, "pool", pool)
                .description("Retired endpoints let go: no leg ran on them for as long as anything owed on them "
                        + "can be due")
                .register(registry).increment();
    }

    void reloaded(String source, RouteReload.Outcome outcome) {
        registry.counter("handoff.routes.reloads", "source", source, "outcome", outcome.label()).increment();
    }
}
