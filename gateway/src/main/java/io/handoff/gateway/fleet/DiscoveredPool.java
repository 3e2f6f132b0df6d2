package io.handoff.gateway.fleet;

import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.routing.EndpointSource;
import io.handoff.gateway.routing.KubernetesSource;
import io.handoff.gateway.routing.MembershipRefusal;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jboss.logging.Logger;

import java.net.URI;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * One route's pool fed by Kubernetes: brings the pool's discovered members to what the slices or pods offer now.
 * Endpoints join and retire through {@link PoolMembership}, so a joining one passes negotiation's check (and is
 * sampled at once, as the admin API's are) and a retired one finishes its legs and stays resolvable for cleanup. Only
 * members this pool added are retired here: static and admin endpoints are never touched.
 *
 * <p>An endpoint the pool refuses (its connector does not accept it, or its name is taken) is logged and counted once,
 * then left out until Kubernetes stops offering it; offered again later, it is tried again.
 */
final class DiscoveredPool {

    private static final Logger LOG = Logger.getLogger(DiscoveredPool.class);

    private final String route;
    private final String pool;
    private final KubernetesEndpoints settings;
    private final KubernetesSource source;
    private final PoolMembership membership;
    private final FleetSampler sampler;
    private final Counter refusals;
    private final Set<String> joined = new HashSet<>();
    private final Map<String, URI> refused = new HashMap<>();

    DiscoveredPool(String route, String pool, KubernetesEndpoints settings, PoolMembership membership,
            FleetSampler sampler, MeterRegistry metrics) {
        this.route = route;
        this.pool = pool;
        this.settings = settings;
        this.source = KubernetesSource.of(route, pool, settings.source());
        this.membership = membership;
        this.sampler = sampler;
        // registered at once, so that a dashboard sees 0 before the first refusal
        this.refusals = metrics.counter("handoff.pool.endpoints.refused", "route", route, "pool", pool, "source",
                EndpointSource.KUBERNETES.label());
    }

    String route() {
        return route;
    }

    String pool() {
        return pool;
    }

    KubernetesEndpoints settings() {
        return settings;
    }

    KubernetesSource source() {
        return source;
    }

    /**
     * The observed half of negotiation, as for an endpoint the admin API adds: one answering as the wrong role or
     * serving another model is tripped by its sample and stays out.
     */
    private void sampleAtOnce(PoolMembership.Member added) {
        sampler.sample(added.route(), pool, PoolMembership.pool(added.route(), pool), added.member()).subscribe()
                .with(sample -> { }, failure -> LOG.debugf(failure, "route %s: sampling %s endpoint %s", route, pool,
                        added.member().endpoint().name()));
    }

    /** Retires what is no longer offered, then adds what is new. Serialised: informers call it on their threads. */
    synchronized void offer(Map<String, URI> offered) {
        for (String name : Set.copyOf(joined)) {
            if (!offered.containsKey(name)) {
                joined.remove(name);
                try {
                    PoolMembership.Member retired = membership.retire(route, pool, name);
                    sampler.retired(retired.route(), pool, retired.member());
                } catch (MembershipRefusal e) {
                    // retired already, by the admin API: nothing left to do
                    LOG.debugf("route %s: %s endpoint %s left Kubernetes, already retired", route, pool, name);
                }
            }
        }
        refused.keySet().retainAll(offered.keySet());
        for (Map.Entry<String, URI> e : offered.entrySet()) {
            String name = e.getKey();
            if (joined.contains(name) || e.getValue().equals(refused.get(name))) {
                continue;
            }
            try {
                PoolMembership.Member added = membership.add(route, pool, name, e.getValue().toString(),
                        EndpointSource.KUBERNETES);
                joined.add(name);
                refused.remove(name);
                sampleAtOnce(added);
            } catch (MembershipRefusal refusal) {
                refused.put(name, e.getValue());
                LOG.warnf("route %s: %s endpoint %s from Kubernetes was refused (%s): %s", route, pool, name,
                        refusal.kind(), refusal.getMessage());
                refusals.increment();
            }
        }
    }
}
