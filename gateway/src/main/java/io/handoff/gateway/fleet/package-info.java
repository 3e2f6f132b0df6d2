/**
 * Where a pool's endpoints come from while the gateway runs, besides the route's configuration: Kubernetes
 * EndpointSlices or pods, watched with an informer. Endpoints found here join and leave pools only through the routing
 * room's {@code PoolMembership}, as the admin API's do, so they pass the same negotiation check and a leaving one
 * keeps finishing its legs and stays resolvable for cleanup. A joining endpoint is sampled at once through the
 * control room's sampler, as the admin API's are. Nothing here runs, and no cluster is contacted, unless a
 * route asks for discovery.
 */
package io.handoff.gateway.fleet;
