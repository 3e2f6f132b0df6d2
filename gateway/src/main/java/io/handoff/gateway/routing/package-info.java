/**
 * Routes: which model goes to which engine family, prefill pool and decode pool, under which schedule styles,
 * bypass policy, leases and timeouts. Routes are checked against their connector's declared capabilities when the
 * gateway starts, and a route that cannot be honoured stops the start. The routes serving are one immutable
 * {@link io.handoff.gateway.routing.RouteTable}; a reload ({@link io.handoff.gateway.routing.RouteRegistry#reload})
 * negotiates a whole new one and swaps it in, or is refused whole and changes nothing. Endpoint choice within a
 * pool (a policy per pool, {@link io.handoff.gateway.routing.EndpointChoice}: least outstanding with a round-robin
 * tie-break, power-of-two, prefix affinity; a circuit breaker per endpoint, whose recovery probe runs, as every
 * probe of an endpoint does, under a SmallRye Fault Tolerance guard, {@code ProbeGuard}) lives here too, as does the
 * estimate of what each decode endpoint's prefix cache holds
 * ({@link io.handoff.gateway.routing.DecodeCacheEstimate}), by which the uncached-prompt bypass chooses a decode
 * endpoint and decides. Cleanup discharges run through the connector of
 * the route that recorded them ({@link io.handoff.gateway.routing.RoutedCleanupPort}), each engine call under a
 * SmallRye Fault Tolerance guard (timeout, a few immediate retries) before the reaper's durable schedule takes over.
 */
package io.handoff.gateway.routing;
