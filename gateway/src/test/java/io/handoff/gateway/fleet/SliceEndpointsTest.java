package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** Which endpoints of EndpointSlices a pool takes, under which name and URL. */
class SliceEndpointsTest {

    /** A pool's discovery settings, as configuration would give them. */
    record Pool(Optional<String> portName, OptionalInt port, String scheme) implements KubernetesEndpoints {

        static Pool byName(String name) {
            return new Pool(Optional.of(name), OptionalInt.empty(), "http");
        }

        @Override
        public String source() {
            return "endpoint-slices";
        }

        @Override
        public Optional<String> namespace() {
            return Optional.empty();
        }

        @Override
        public String labelSelector() {
            return "pool=test";
        }
    }

    private static EndpointSliceBuilder slice(String name, String addressType, EndpointPort... ports) {
        return new EndpointSliceBuilder().withNewMetadata().withName(name).endMetadata().withAddressType(addressType)
                .withPorts(ports);
    }

    private static EndpointPort port(String name, int number) {
        return new EndpointPort(null, name, number, "TCP");
    }

    private static EndpointBuilder endpoint(String pod, String address, Boolean ready, Boolean terminating) {
        EndpointBuilder e = new EndpointBuilder().withAddresses(address).withNewConditions().withReady(ready)
                .withTerminating(terminating).endConditions();
        return pod == null ? e : e.withNewTargetRef().withKind("Pod").withName(pod).endTargetRef();
    }

    @Test
    void readyEndpointsJoinUnderPodAddressAndPortAndUnreadyOrTerminatingOnesDoNot() {
        EndpointSlice s = slice("vllm-decode-x1", "IPv4", port("metrics", 9000), port("http", 8000))
                .addToEndpoints(endpoint("vllm-decode-0", "10.0.0.1", true, false).build())
                .addToEndpoints(endpoint("vllm-decode-1", "10.0.0.2", null, null).build())
                .addToEndpoints(endpoint("vllm-decode-2", "10.0.0.3", false, false).build())
                .addToEndpoints(endpoint("vllm-decode-3", "10.0.0.4", true, true).build())
                .addToEndpoints(endpoint(null, "10.0.0.5", true, false).build())
                .build();
        assertEquals(Map.of(
                "vllm-decode-0_10.0.0.1_8000", URI.create("http://10.0.0.1:8000"),
                "vllm-decode-1_10.0.0.2_8000", URI.create("http://10.0.0.2:8000"),
                "vllm-decode-x1_10.0.0.5_8000", URI.create("http://10.0.0.5:8000")),
                SliceEndpoints.ready(List.of(s), Pool.byName("http")));
    }

    @Test
    void aPodBackWithAnotherAddressOrAnAddressTakenOverIsAnotherName() {
        EndpointSlice before = slice("s", "IPv4", port("http", 8000))
                .addToEndpoints(endpoint("vllm-decode-0", "10.0.0.1", true, false).build()).build();
        EndpointSlice moved = slice("s", "IPv4", port("http", 8000))
                .addToEndpoints(endpoint("vllm-decode-0", "10.0.0.9", true, false).build()).build();
        EndpointSlice takenOver = slice("s", "IPv4", port("http", 8000))
                .addToEndpoints(endpoint("vllm-decode-7", "10.0.0.1", true, false).build()).build();
        String first = SliceEndpoints.ready(List.of(before), Pool.byName("http")).keySet().iterator().next();
        assertNotEquals(first, SliceEndpoints.ready(List.of(moved), Pool.byName("http")).keySet().iterator().next());
        assertNotEquals(first, SliceEndpoints.ready(List.of(takenOver), Pool.byName("http")).keySet().iterator()
                .next());
    }

    @Test
    void theSlicePortIsChosenByNumberByNameOrAsTheOnlyOne() {
        EndpointSlice two = slice("s", "IPv4", port("metrics", 9000), port("http", 8000))
                .addToEndpoints(endpoint("p", "10.0.0.1", true, false).build()).build();
        EndpointSlice one = slice("s", "IPv4", port(null, 8001))
                .addToEndpoints(endpoint("p", "10.0.0.1", true, false).build()).build();
        Pool none = new Pool(Optional.empty(), OptionalInt.empty(), "http");
        assertEquals(Map.of(), SliceEndpoints.ready(List.of(two), none), "two ports and no choice: none");
        assertEquals(Map.of("p_10.0.0.1_8001", URI.create("http://10.0.0.1:8001")),
                SliceEndpoints.ready(List.of(one), none));
        assertEquals(Map.of(), SliceEndpoints.ready(List.of(one), Pool.byName("http")), "no port of that name");
        assertEquals(Map.of("p_10.0.0.1_7000", URI.create("grpc://10.0.0.1:7000")), SliceEndpoints.ready(
                List.of(two), new Pool(Optional.of("http"), OptionalInt.of(7000), "grpc")), "the number wins");
    }

    @Test
    void anIpv6AddressIsBracketedInTheUrlAndHasNoColonInTheName() {
        EndpointSlice s = slice("s", "IPv6", port("http", 8000))
                .addToEndpoints(endpoint("p", "fd00::1", true, false).build()).build();
        assertEquals(Map.of("p_fd00--1_8000", URI.create("http://[fd00::1]:8000")),
                SliceEndpoints.ready(List.of(s), Pool.byName("http")));
    }
}
