package io.handoff.gateway.fleet;

/**
 * One informer's scope: the EndpointSlices of a namespace that a label selector chooses. Pools that ask for the same
 * scope share the informer.
 */
record SliceWatch(String namespace, String labelSelector) {

    @Override
    public String toString() {
        return namespace + "/" + labelSelector;
    }
}
