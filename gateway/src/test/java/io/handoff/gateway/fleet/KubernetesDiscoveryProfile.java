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
 * {@value #DISCOVERED_ROUTE}, whose pools have no configured endpoint and are found there alone; and route
 * {@value #PODS_ROUTE}, whose pools are the ready pods labelled {@code pool=pods-prefill} and {@code pool=pods-decode}.
 */
public class KubernetesDiscoveryProfile extends ControlPlaneProfile {

    static final String NAMESPACE = "engines";
    static final String SELECTOR_LABEL = "pool";
    static final String SELECTOR_VALUE = "vllm-decode";
    static final String DISCOVERED_ROUTE = "discovered";
    static final String DISCOVERED_MODEL = "m-discovered";
    static final String PODS_ROUTE = "pods";
    static final String PODS_MODEL = "m-pods";

    /** The label value of the slices of a pool of {@link #DISCOVERED_ROUTE}; they have one port each. */
    static String onlyPool(String pool) {
        return "discovered-" + pool;
    }

    /** The label value of the pods of a pool of {@link #PODS_ROUTE}. */
    static String podPool(String pool) {
        return "pods-" + pool;
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
        // a route whose pools are the pods the selector chooses, their port by the container port's name
        String pods = "handoff.routes." + PODS_ROUTE + ".";
        config.put(pods + "model", PODS_MODEL);
        config.put(pods + "engine-model", SimFleetTestResource.ENGINE_MODEL);
        config.put(pods + "family", "vllm");
        config.put(pods + "options.hold-mode", "fixed");
        config.put(pods + "options.hold-seconds", "480");
        for (String pool : List.of("prefill", "decode")) {
            String podDiscovery = pods + pool + "-discovery.kubernetes.";
            config.put(podDiscovery + "source", "pods");
            config.put(podDiscovery + "namespace", NAMESPACE);
            config.put(podDiscovery + "label-selector", SELECTOR_LABEL + "=" + podPool(pool));
            config.put(podDiscovery + "port-name", "http");
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
