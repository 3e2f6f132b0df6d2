package io.handoff.gateway.routing;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The routes a replica serves at one moment, never changed once made: a reload makes a new table with the next
 * generation and swaps it in whole, so a request sees one table from its routing on (the route it got is the route it
 * finishes on) and no reader ever sees half a reload. The table at start is generation 1.
 */
public final class RouteTable {

    private final long generation;
    private final Map<String, Route> byName;
    private final Map<String, Route> byModel;

    /**
     * @throws IllegalArgumentException when two routes share a name, or a model name or alias is served twice
     */
    public RouteTable(long generation, List<Route> routes) {
        Map<String, Route> names = new LinkedHashMap<>();
        Map<String, Route> models = new HashMap<>();
        for (Route route : routes) {
            if (names.put(route.name(), route) != null) {
                throw new IllegalArgumentException("route " + route.name() + " is defined twice");
            }
            for (String model : route.settings().modelNames()) {
                Route other = models.put(model, route);
                if (other != null) {
                    throw new IllegalArgumentException("route " + route.name() + ": model name '" + model
                            + "' is already served by route " + other.name());
                }
            }
        }
        this.generation = generation;
        this.byName = Collections.unmodifiableMap(names);
        this.byModel = Map.copyOf(models);
    }

    public long generation() {
        return generation;
    }

    /** The route serving a model name or alias. */
    public Optional<Route> forModel(String model) {
        return Optional.ofNullable(byModel.get(model));
    }

    public Optional<Route> named(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every route, in the order they were configured. */
    public Collection<Route> all() {
        return byName.values();
    }
}
