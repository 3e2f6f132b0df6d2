package io.handoff.gateway.routing;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool's Kubernetes source is {@code endpoint-slices} (by default) or {@code pods}; anything else refuses the route
 * by key and value. Routes are read here as a reload reads them, through the same mapping and the same check the
 * start makes ({@link RouteRegistry#discoveryOf}).
 */
class KubernetesSourceTest {

    private static String route(String source) {
        String r = "handoff.routes.r1.";
        String d = r + "decode-discovery.kubernetes.";
        return String.join("\n", r + "model=m1", r + "family=vllm", r + "prefill=p-0=http://127.0.0.1:1",
                d + "label-selector=app=vllm-decode", d + "port-name=http",
                source == null ? "" : d + "source=" + source);
    }

    @Test
    void slicesByDefaultPodsWhenAsked() {
        List<RoutesText.Parsed> slices = RoutesText.parse(route(null));
        assertTrue(slices.get(0).discovery().get("decode").startsWith("kubernetes source=endpoint-slices "),
                slices.get(0).discovery().toString());
        List<RoutesText.Parsed> pods = RoutesText.parse(route("pods"));
        assertTrue(pods.get(0).discovery().get("decode").startsWith("kubernetes source=pods "),
                pods.get(0).discovery().toString());
        assertEquals(KubernetesSource.PODS, KubernetesSource.of("r1", "decode", "pods"));
    }

    @Test
    void anotherSourceRefusesTheRouteByKeyAndValue() {
        for (String bad : List.of("endpoints", "Pods", "endpointslices")) {
            IllegalArgumentException refusal = assertThrows(IllegalArgumentException.class,
                    () -> RoutesText.parse(route(bad)));
            assertEquals("route r1: decode-discovery.kubernetes.source '" + bad
                    + "' is not one of endpoint-slices, pods", refusal.getMessage());
        }
    }
}
