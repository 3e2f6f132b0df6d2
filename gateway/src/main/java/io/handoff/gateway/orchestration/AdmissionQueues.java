package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RoutesSwapped;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The admission queue of every route that lets requests wait ({@code queue.max-waiting} above 0): one per route
 * object, so a route a reload replaced keeps its own queue for the requests that started on it (they are admitted on
 * it, as they started), and the new route of the same name gets a new one with its own settings. A route a reload
 * kept unchanged is the same object, and keeps its queue and whoever waits in it.
 */
@ApplicationScoped
public class AdmissionQueues {

    /** A route as a key by identity: two routes of one name, before and after a reload, are two queues. */
    private record Key(Route route) {

        @Override
        public boolean equals(Object other) {
            return other instanceof Key k && k.route == route;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(route);
        }
    }

    private final Map<Key, AdmissionQueue> byRoute = new ConcurrentHashMap<>();
    private final Clock clock;
    private final Vertx vertx;
    private final AdmissionMetrics metrics;

    public AdmissionQueues(RouteRegistry routes, Clock clock, Vertx vertx, AdmissionMetrics metrics) {
        this.clock = clock;
        this.vertx = vertx;
        this.metrics = metrics;
        routes.all().forEach(this::of);
    }

    /** The route's queue; empty when the route refuses at once what it has no slot for. */
    Optional<AdmissionQueue> of(Route route) {
        if (route.settings().queueMaxWaiting() <= 0) {
            return Optional.empty();
        }
        return Optional.of(byRoute.computeIfAbsent(new Key(route), k -> new AdmissionQueue(route.name(),
                route.settings().queueMaxWaiting(), route.settings().queueTimeout(), clock, vertx, metrics)));
    }

    /**
     * Forgets the queues of routes a reload took out. Whoever waits in one keeps it (a waiter and a freed slot hold
     * their queue), so they are still admitted or refused there; only the route's gauge stops counting them.
     */
    void swapped(@Observes RoutesSwapped swap) {
        byRoute.entrySet().removeIf(e -> {
            boolean gone = !swap.serves(e.getKey().route());
            if (gone) {
                e.getValue().forgotten();
            }
            return gone;
        });
    }
}
