package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The admission queue of every route that lets requests wait ({@code queue.max-waiting} above 0), made at start. */
@ApplicationScoped
public class AdmissionQueues {

    private final Map<String, AdmissionQueue> byRoute = new HashMap<>();

    public AdmissionQueues(RouteRegistry routes, Clock clock, Vertx vertx, AdmissionMetrics metrics) {
        for (Route route : routes.all()) {
            if (route.settings().queueMaxWaiting() > 0) {
                byRoute.put(route.name(), new AdmissionQueue(route.name(), route.settings().queueMaxWaiting(),
                        route.settings().queueTimeout(), clock, vertx, metrics));
            }
        }
    }

    /** The route's queue; empty when the route refuses at once what it has no slot for. */
    Optional<AdmissionQueue> of(Route route) {
        return Optional.ofNullable(byRoute.get(route.name()));
    }
}
