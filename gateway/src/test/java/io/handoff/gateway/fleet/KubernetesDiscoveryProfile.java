package io.handoff.gateway.fleet;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.KubernetesApiResource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The control-plane fleet in a gateway of its own, whose route {@code vllm} also takes decode endpoints from the
 * EndpointSlices labelled {@code pool=vllm-decode} in namespace {@value #NAMESPACE} of the mock API server.
 */
public class KubernetesDiscoveryProfile extends ControlPlaneProfile {

    static final String NAMESPACE = "engines";
    static final String SELECTOR_LABEL = "pool";
    static final String SELECTOR_VALUE = "vllm-decode";

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        String discovery = "handoff.routes.vllm.decode-discovery.kubernetes.";
        config.put(discovery + "namespace", NAMESPACE);
        config.put(discovery + "label-selector", SELECTOR_LABEL + "=" + SELECTOR_VALUE);
        config.put(discovery + "port-name", "http");
        return config;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        List<TestResourceEntry> resources = new ArrayList<>(super.testResources());
        resources.add(new TestResourceEntry(KubernetesApiResource.class));
        return resources;
    }
}
