package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;

import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The engines a set of pods offers a pool now: every pod that is ready (its {@code Ready} condition is true), not
 * terminating (no deletion timestamp) and has an IP, on the pool's port among its containers' ports, by the name it
 * joins the pool under ({@link EndpointNames}: the pod's name, IP and port).
 *
 * <p>The same rules as a slice's endpoints, read from the pod itself: the kubelet sets {@code Ready} when every
 * container's readiness probe passes, which is what the EndpointSlice controller copies into a slice.
 */
final class PodEndpoints {

    private PodEndpoints() {
    }

    /** Name to URL of the ready pods, in name order; a pod without the pool's port offers nothing. */
    static Map<String, URI> ready(Collection<Pod> pods, KubernetesEndpoints pool) {
        Map<String, URI> out = new TreeMap<>();
        for (Pod pod : pods) {
            PodStatus status = pod.getStatus();
            if (status == null || !ready(pod) || status.getPodIP() == null || status.getPodIP().isBlank()) {
                continue;
            }
            List<ContainerPort> ports = pod.getSpec() == null ? List.of() : pod.getSpec().getContainers().stream()
                    .map(Container::getPorts).filter(p -> p != null).flatMap(List::stream).toList();
            Optional<Integer> port = PoolPort.of(pool, ports, ContainerPort::getName, ContainerPort::getContainerPort);
            port.ifPresent(p -> EndpointNames.put(out, pod.getMetadata().getName(), status.getPodIP(), p,
                    pool.scheme()));
        }
        return out;
    }

    /**
     * Ready and not terminating. Unlike a slice's condition, a pod's {@code Ready} that is absent or {@code Unknown}
     * is not ready: the kubelet has not said so (a pod just scheduled, or on a node that stopped reporting).
     */
    private static boolean ready(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        return pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }
}
