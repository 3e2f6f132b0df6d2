package io.handoff.gateway.routing;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a pool's Kubernetes discovery watches ({@code handoff.routes.<name>.<pool>-discovery.kubernetes.source}): the
 * EndpointSlices of a Service, or the pods themselves where there is no Service (or it should not matter).
 */
public enum KubernetesSource {
    ENDPOINT_SLICES("endpoint-slices"), PODS("pods");

    /** The label of {@link #ENDPOINT_SLICES}: what a pool watches when its configuration does not say. */
    public static final String DEFAULT = "endpoint-slices";

    private final String label;

    KubernetesSource(String label) {
        this.label = label;
    }

    /** The name configuration, the metrics and the log use. */
    public String label() {
        return label;
    }

    /**
     * The source a setting names.
     *
     * @throws IllegalArgumentException naming the route, the pool, the value and what it may be
     */
    public static KubernetesSource of(String route, String pool, String setting) {
        return Arrays.stream(values()).filter(s -> s.label.equals(setting)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("route " + route + ": " + pool
                        + "-discovery.kubernetes.source '" + setting + "' is not one of "
                        + Arrays.stream(values()).map(KubernetesSource::label).collect(Collectors.joining(", "))));
    }
}
