package io.handoff.gateway.fleet;

import java.net.URI;
import java.util.Map;

/**
 * The name and URL an engine found in Kubernetes joins its pool under, whichever object offered it.
 *
 * <p>A name is {@code <pod>_<address>_<port>} ({@code vllm-decode-0_10.244.1.7_8000}), so a name always means one URL:
 * a pod that comes back under its name with another address (a StatefulSet's), or an address another pod takes over,
 * is another name. Cleanup obligations name their engine by endpoint name, and the pools refuse to let a name change
 * its URL while KV may still be owed on it.
 */
final class EndpointNames {

    private EndpointNames() {
    }

    /** Puts the engine of {@code owner} at {@code address} (IPv4 or IPv6) and {@code port} into {@code out}. */
    static void put(Map<String, URI> out, String owner, String address, int port, String scheme) {
        String name = owner + "_" + address.replace(':', '-') + "_" + port;
        String host = address.contains(":") ? "[" + address + "]" : address;
        out.put(name, URI.create(scheme + "://" + host + ":" + port));
    }
}
