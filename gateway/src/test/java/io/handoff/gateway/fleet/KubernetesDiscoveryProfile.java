package io.handoff.gateway.fleet;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.KubernetesApiResource;
import io.handoff.gateway.testing.SimFleetTestResource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The control-plane fleet in a gateway of its own, whose route {@code vllm} also takes decode endpoints from the
 * EndpointSlices labelled {@code pool=vllm-decode} in namespace {@value #NAMESPACE} of the mock API server; and route
 * {@value #DISCOVERED_ROUTE}, whose pools have no configured endpoint and are found there alone.
 */
public class KubernetesDiscoveryProfile extends ControlPlaneProfile {

    static final String NAMESPACE = "engines";
    static final String SELECTOR_LABEL = "pool";
    static final String SELECTOR_VALUE = "vllm-decode";
    static final String DISCOVERED_ROUTE = "discovered";
    static final String DISCOVERED_MODEL = "m-discovered";

    /** The label value of the slices of a pool of {@link #DISCOVERED_ROUTE}; they have one port each. */
    static String onlyPool(String pool) {
        return "discovered-" + pool;
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        String discovery = "handoff.routes.vllm.decode-discovery.kubernetes.";
        config.put(discovery + "namespace", NAMESPACE);
        config.put(discovery + "label-selector", SELECTOR_LABEL + "=" + SELECTOR_VALUE);
        config.put(discovery + "port-name", "http");
        // a route whose pools are wholly discovered: no URL configured
        String route = "handoff.routes." + DISCOVERED_ROUTE + ".";
        config.put(route + "model", DISCOVERED_MODEL);
        config.put(route + "engine-model", SimFleetTestResource.ENGINE_MODEL);
        config.put(route + "family", "vllm");
        config.put(route + "options.hold-mode", "fixed");
        config.put(route + "options.hold-seconds", "480");
        // a ring of prefix-affinity that starts empty and is filled by discovery
        config.put(route + "prefill-policy", "prefix-affinity");
        for (String pool : List.of("prefill", "decode")) {
            config.put(route + pool + "-discovery.kubernetes.namespace", NAMESPACE);
            config.put(route + pool + "-discovery.kubernetes.label-selector", SELECTOR_LABEL + "=" + onlyPool(pool));
        }
        return config;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        List<TestResourceEntry> resources = new ArrayList<>(super.testResources());
        resources.add(new TestResourceEntry(KubernetesApiResource.class));
        return resources;
    }
}
