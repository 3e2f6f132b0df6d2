package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;

import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The engines a set of EndpointSlices offers a pool now: every endpoint that is ready and not terminating, on the
 * pool's port, by the name it joins the pool under ({@link EndpointNames}; the slice's name stands for the pod where
 * the endpoint names none).
 */
final class SliceEndpoints {

    private SliceEndpoints() {
    }

    /** Name to URL of the ready endpoints, in name order; a slice without the pool's port offers nothing. */
    static Map<String, URI> ready(Collection<EndpointSlice> slices, KubernetesEndpoints pool) {
        Map<String, URI> out = new TreeMap<>();
        for (EndpointSlice slice : slices) {
            Optional<Integer> port = PoolPort.of(pool, slice.getPorts(), EndpointPort::getName,
                    EndpointPort::getPort);
            if (port.isEmpty()) {
                continue;
            }
            for (Endpoint e : slice.getEndpoints()) {
                if (!ready(e.getConditions()) || e.getAddresses() == null || e.getAddresses().isEmpty()) {
                    continue;
                }
                // the API: "consumers must only use the first" address; the others are interchangeable with it
                String address = e.getAddresses().get(0);
                ObjectReference pod = e.getTargetRef();
                String owner = pod != null && pod.getName() != null ? pod.getName() : slice.getMetadata().getName();
                EndpointNames.put(out, owner, address, port.get(), pool.scheme());
            }
        }
        return out;
    }

    /**
     * Ready and not terminating. The API reads a ready condition it does not know (null) as ready; terminating
     * unknown is not terminating. A terminating endpoint may still be ready while it drains: it takes no new legs.
     */
    private static boolean ready(EndpointConditions c) {
        if (c == null) {
            return true;
        }
        return !Boolean.FALSE.equals(c.getReady()) && !Boolean.TRUE.equals(c.getTerminating());
    }
}
