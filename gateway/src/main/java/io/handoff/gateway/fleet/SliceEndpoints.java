package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.handoff.gateway.routing.RoutingConfig.KubernetesSlices;

import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The engines a set of EndpointSlices offers a pool now: every endpoint that is ready and not terminating, on the
 * pool's port, by the name it joins the pool under.
 *
 * <p>A name is {@code <pod>_<address>_<port>} ({@code vllm-decode-0_10.244.1.7_8000}; the slice's name where the
 * endpoint names no pod), so a name always means one URL: a pod that comes back under its name with another address,
 * or an address another pod takes over, is another name. Cleanup obligations name their engine by endpoint name, and
 * the pools refuse to let a name change its URL while KV may still be owed on it.
 */
final class SliceEndpoints {

    private SliceEndpoints() {
    }

    /** Name to URL of the ready endpoints, in name order; a slice without the pool's port offers nothing. */
    static Map<String, URI> ready(Collection<EndpointSlice> slices, KubernetesSlices pool) {
        Map<String, URI> out = new TreeMap<>();
        for (EndpointSlice slice : slices) {
            Optional<Integer> port = port(slice.getPorts(), pool);
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
                String name = owner + "_" + address.replace(':', '-') + "_" + port.get();
                String host = address.contains(":") ? "[" + address + "]" : address;
                out.put(name, URI.create(pool.scheme() + "://" + host + ":" + port.get()));
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

    /** The pool's port on this slice: by number, by name, or the slice's only port. */
    private static Optional<Integer> port(List<EndpointPort> ports, KubernetesSlices pool) {
        if (pool.port().isPresent()) {
            return Optional.of(pool.port().getAsInt());
        }
        if (ports == null) {
            return Optional.empty();
        }
        if (pool.portName().isPresent()) {
            return ports.stream().filter(p -> pool.portName().get().equals(p.getName()) && p.getPort() != null)
                    .map(EndpointPort::getPort).findFirst();
        }
        return ports.size() == 1 ? Optional.ofNullable(ports.get(0).getPort()) : Optional.empty();
    }
}
