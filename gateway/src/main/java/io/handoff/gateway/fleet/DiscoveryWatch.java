package io.handoff.gateway.fleet;

import io.handoff.gateway.routing.KubernetesSource;

/**
 * One informer's scope: the EndpointSlices, or the pods, of a namespace that a label selector chooses. Pools that ask
 * for the same scope share the informer.
 */
record DiscoveryWatch(KubernetesSource source, String namespace, String labelSelector) {

    @Override
    public String toString() {
        return source.label() + " " + namespace + "/" + labelSelector;
    }
}
