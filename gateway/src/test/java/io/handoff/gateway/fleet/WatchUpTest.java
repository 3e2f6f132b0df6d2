package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.handoff.gateway.routing.KubernetesSource;
import io.handoff.gateway.testing.KubernetesApiResource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The watch-up gauge reads a real informer: 1 once it watches the mock API server, 0 when it is stopped, and 0 while
 * it cannot reach its API server at all (it keeps retrying meanwhile).
 */
class WatchUpTest {

    private static double up(MeterRegistry metrics) {
        return metrics.get(WatchUp.METRIC).tags("route", "r1", "pool", "decode", "source", "pods").gauge().value();
    }

    @Test
    void upWhileWatchingDownOnceStopped() {
        KubernetesApiResource api = new KubernetesApiResource();
        api.start();
        try {
            MeterRegistry metrics = new SimpleMeterRegistry();
            SharedIndexInformer<Pod> informer = KubernetesApiResource.client().pods().inNamespace("engines")
                    .withLabelSelector("app=vllm").runnableInformer(60_000);
            WatchUp.register(metrics, informer, "r1", "decode", KubernetesSource.PODS);
            assertEquals(0, up(metrics), "not started: not watching");
            informer.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> up(metrics) == 1);
            informer.stop();
            assertEquals(0, up(metrics));
        } finally {
            api.stop();
        }
    }

    @Test
    void downWhileTheApiServerCannotBeReached() throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + closed).withRequestRetryBackoffLimit(0).build()).build()) {
            MeterRegistry metrics = new SimpleMeterRegistry();
            SharedIndexInformer<Pod> informer = client.pods().inNamespace("engines").withLabelSelector("app=vllm")
                    .runnableInformer(60_000);
            WatchUp.register(metrics, informer, "r1", "decode", KubernetesSource.PODS);
            AtomicInteger failures = new AtomicInteger();
            informer.exceptionHandler((started, failure) -> {
                failures.incrementAndGet();
                return true;
            });
            // the list fails, again and again as the informer retries: the watch stays down throughout
            informer.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> failures.get() >= 2);
            assertEquals(0, up(metrics));
            informer.stop();
        }
    }
}
