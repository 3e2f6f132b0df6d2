package io.handoff.gateway.routing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * Routes a reload took out of the table (removed, or replaced by a changed route of the same name), kept reachable
 * for what they still owe: requests that started on them run to their end on them, and the KV their engines hold is
 * discharged through their connector. A retired route is let go (its connector closed) once no request has run on it
 * for as long as its engines hold parked KV ({@code capabilities().engineHold()}): by then every engine has freed
 * what the route could still owe by its own timer. Not thread-safe: the registry serialises every call.
 */
final class RetiredRoutes {

    private static final class Retired {
        final Route route;
        Instant quietSince;

        Retired(Route route) {
            this.route = route;
        }
    }

    /** Newest first: a lookup by name finds the latest generation of that name first. */
    private final List<Retired> routes = new ArrayList<>();

    void add(Route route) {
        routes.add(0, new Retired(route));
    }

    /** The newest retired route of that name that has an endpoint of that name, active or retired, in a pool. */
    Optional<Route> withEndpoint(String routeName, String endpointName) {
        for (Retired r : routes) {
            if (r.route.name().equals(routeName) && (r.route.prefill().member(endpointName).isPresent()
                    || r.route.decode().member(endpointName).isPresent())) {
                return Optional.of(r.route);
            }
        }
        return Optional.empty();
    }

    /** Every retired route of that name, newest first. */
    List<Route> named(String routeName) {
        return routes.stream().filter(r -> r.route.name().equals(routeName)).map(r -> r.route).toList();
    }

    List<Route> all() {
        return routes.stream().map(r -> r.route).toList();
    }

    /** Takes out, and answers, the routes that owe nothing any more at {@code now}. */
    List<Route> letGo(Instant now) {
        List<Route> gone = new ArrayList<>();
        for (Iterator<Retired> it = routes.iterator(); it.hasNext(); ) {
            Retired r = it.next();
            if (r.route.inFlight().get() > 0) {
                r.quietSince = null;
                continue;
            }
            if (r.quietSince == null) {
                r.quietSince = now;
            }
            Duration hold = r.route.capabilities().engineHold();
            if (!now.isBefore(r.quietSince.plus(hold))) {
                it.remove();
                gone.add(r.route);
            }
        }
        return gone;
    }

    int size() {
        return routes.size();
    }
}
