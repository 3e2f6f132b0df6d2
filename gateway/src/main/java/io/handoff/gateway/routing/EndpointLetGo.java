package io.handoff.gateway.routing;

/**
 * The CDI event of a retired endpoint of a serving route let go once nothing owed on it could be due
 * ({@link RetiredEndpoints}), fired after it left its pool: whoever keeps something per endpoint (gauges, samples)
 * forgets it, so that what is kept stays as many as the endpoints a pool has, however many come and go.
 */
public record EndpointLetGo(Route route, String pool, String endpoint) {
}
