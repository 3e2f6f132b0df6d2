package io.handoff.gateway.routing;

/**
 * The CDI event of a reload that swapped in a new table, fired after the swap: whoever keeps something per route
 * (gauges, admission queues, samples) follows it. Routes of {@code previous} that {@code current} does not hold by
 * identity were retired; they still finish what runs on them.
 */
public record RoutesSwapped(RouteTable previous, RouteTable current) {

    /** Whether {@code route} (this very object) serves in the new table. */
    public boolean serves(Route route) {
        return current.named(route.name()).filter(r -> r == route).isPresent();
    }
}
