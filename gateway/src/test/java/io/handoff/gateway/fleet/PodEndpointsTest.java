package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.handoff.gateway.fleet.SliceEndpointsTest.Pool;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which pods a pool takes, under which name and URL: ready, not terminating, with an IP and the pool's port. */
class PodEndpointsTest {

    private static PodBuilder pod(String name, String ip, String ready) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec()
                .addNewContainer().withName("engine").addNewPort().withName("http").withContainerPort(8000).endPort()
                .addNewPort().withName("metrics").withContainerPort(9000).endPort().endContainer()
                .addNewContainer().withName("sidecar").endContainer()
                .endSpec()
                .withNewStatus().withPodIP(ip).addNewCondition().withType("PodScheduled").withStatus("True")
                .endCondition().endStatus();
        if (ready != null) {
            pod.editStatus().addNewCondition().withType("Ready").withStatus(ready).endCondition().endStatus();
        }
        return pod;
    }

    @Test
    void aReadyPodWithAnIpIsOfferedByItsNameAddressAndPort() {
        assertEquals(Map.of("vllm-0_10.0.0.7_8000", URI.create("http://10.0.0.7:8000"),
                "vllm-1_fd00--1_8000", URI.create("http://[fd00::1]:8000")),
                PodEndpoints.ready(List.of(pod("vllm-0", "10.0.0.7", "True").build(),
                        pod("vllm-1", "fd00::1", "True").build()), Pool.byName("http")));
    }

    @Test
    void aPodNotReadyWithoutAnIpOrTerminatingIsNotOffered() {
        List<Pod> pods = List.of(pod("unready", "10.0.0.1", "False").build(),
                pod("unknown", "10.0.0.2", "Unknown").build(),
                pod("unsaid", "10.0.0.3", null).build(),
                pod("no-ip", null, "True").build(),
                pod("blank-ip", "", "True").build(),
                pod("terminating", "10.0.0.4", "True").editMetadata()
                        .withDeletionTimestamp("2026-12-05T08:00:00Z").endMetadata().build(),
                new PodBuilder().withNewMetadata().withName("no-status").endMetadata().build());
        assertEquals(Map.of(), PodEndpoints.ready(pods, Pool.byName("http")));
    }

    @Test
    void thePortIsChosenByNumberByNameOrAsTheOnlyOne() {
        List<Pod> pods = List.of(pod("vllm-0", "10.0.0.7", "True").build());
        assertEquals(Map.of("vllm-0_10.0.0.7_9000", URI.create("http://10.0.0.7:9000")),
                PodEndpoints.ready(pods, Pool.byName("metrics")));
        assertEquals(Map.of("vllm-0_10.0.0.7_8080", URI.create("https://10.0.0.7:8080")),
                PodEndpoints.ready(pods, new Pool(Optional.of("http"), OptionalInt.of(8080), "https")));
        assertEquals(Map.of(), PodEndpoints.ready(pods, Pool.byName("grpc")), "no port of that name");
        assertEquals(Map.of(), PodEndpoints.ready(pods, new Pool(Optional.empty(), OptionalInt.empty(), "http")),
                "two ports, none named: no guess");
        Pod onePort = new PodBuilder(pod("one", "10.0.0.8", "True").build()).editSpec().editFirstContainer()
                .withPorts(List.of()).addNewPort().withContainerPort(8100).endPort().endContainer().endSpec().build();
        assertEquals(Map.of("one_10.0.0.8_8100", URI.create("http://10.0.0.8:8100")),
                PodEndpoints.ready(List.of(onePort), new Pool(Optional.empty(), OptionalInt.empty(), "http")));
    }
}
