package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.grpc.Status;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.KubernetesApiResource;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Route {@code pods}, whose pools are the pods a label selector chooses on fabric8's mock API server (CRUD mode),
 * each pod pointing at a simulated vLLM engine by its IP and its container port named {@code http}: under load, a
 * pod is added ready, one made unready and one deleted. New legs reach only ready pods, legs running on one that
 * leaves finish, and no simulator keeps KV pinned afterwards. A pod with no IP, or not ready, is not added until it
 * has one and is. The watch reads as up.
 */
@QuarkusTest
@TestProfile(KubernetesDiscoveryProfile.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PodDiscoveryTest {

    private static final Duration EVENT = Duration.ofSeconds(20);
    private static final String ROUTE = KubernetesDiscoveryProfile.PODS_ROUTE;

    @TestHTTPResource("/")
    URL base;

    private GrpcTestClient client;
    private Vertx vertx;
    private final List<SimEngine> engines = new ArrayList<>();

    @BeforeAll
    void startDecodeEngines() {
        vertx = Vertx.vertx();
        for (int i = 0; i < 4; i++) {
            engines.add(AdminListing.decodeEngine(vertx));
        }
    }

    @AfterAll
    void stopThem() {
        engines.forEach(SimEngine::stopBlocking);
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    @Test
    void podsThatComeAndGoUnderLoadTakeLegsOnlyWhileReadyAndLeakNoKv() {
        SimEngine engineA = engines.get(0);
        SimEngine engineB = engines.get(1);
        create(pod("pods-p", prefill(), "prefill"), status(true, true));
        create(pod("pod-a", engineA, "decode"), status(true, true));
        String p = name("pods-p", prefill());
        String a = name("pod-a", engineA);
        String b = name("pod-b", engineB);
        awaitState("prefill", p, "active");
        awaitState("decode", a, "active");
        assertEquals("kubernetes", field(endpoints(), "decode", a, "source"));
        assertEquals("http://127.0.0.1:" + port(engineA), field(endpoints(), "decode", a, "url"));

        List<GenerateCall> running = start(6, 40);
        running.forEach(GenerateCall::awaitFirstToken);
        assertTrue(engineA.stat("requests_total") > 0, "the pod took legs");

        // while they run, b joins and a turns unready
        create(pod("pod-b", engineB, "decode"), status(true, true));
        pods().withName("pod-a").editStatus(pod -> withStatus(pod, status(true, false)));
        awaitState("decode", b, "active");
        awaitState("decode", a, "retired");
        long aSeen = engineA.stat("requests_total");
        List<GenerateCall> whileBServes = start(4, 40);
        whileBServes.forEach(GenerateCall::awaitFirstToken);
        assertTrue(engineB.stat("requests_total") > 0, "the pod that joined under load took legs");

        // b is deleted while its legs run: no ready decode pod is left
        pods().withName("pod-b").delete();
        awaitState("decode", b, "retired");
        long bSeen = engineB.stat("requests_total");
        assertEquals(Status.Code.UNAVAILABLE, start(1, 4).get(0).awaitEnd().getCode(), "no ready decode pod");

        for (List<GenerateCall> calls : List.of(running, whileBServes)) {
            for (GenerateCall call : calls) {
                assertEquals(Status.Code.OK, call.awaitEnd().getCode(), "a running stream finishes");
                assertEquals(40, call.events().stream().filter(e -> e.hasToken()).count());
            }
        }
        assertEquals(aSeen, engineA.stat("requests_total"), "no new leg reached the unready pod");
        assertEquals(bSeen, engineB.stat("requests_total"), "no new leg reached the deleted pod");
        for (String gone : List.of(a, b)) {
            assertEquals("0", field(endpoints(), "decode", gone, "outstanding"), "its legs all ended");
        }

        // a ready again comes back under its name, and takes legs again
        pods().withName("pod-a").editStatus(pod -> withStatus(pod, status(true, true)));
        awaitState("decode", a, "active");
        start(2, 4).forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertEquals(aSeen + 2, engineA.stat("requests_total"));

        pods().withName("pod-a").delete();
        pods().withName("pods-p").delete();
        awaitState("decode", a, "retired");
        awaitState("prefill", p, "retired");
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, prefill().stat("kv_blocks_pinned_now"));
            assertEquals(0, engineA.stat("kv_blocks_pinned_now"));
            assertEquals(0, engineB.stat("kv_blocks_pinned_now"));
        });
    }

    @Test
    void aPodWithoutAnIpOrNotReadyIsNotAddedUntilItHasOneAndIs() {
        SimEngine engineC = engines.get(2);
        SimEngine engineD = engines.get(3);
        create(pod("pod-no-ip", engineC, "decode"), status(false, true));
        create(pod("pod-unready", engineD, "decode"), status(true, false));
        String noIp = name("pod-no-ip", engineC);
        String unready = name("pod-unready", engineD);
        // a ready pod made after them: once it is in, the watch has seen the two before it
        SimEngine sentinelEngine = SimFleetTestResource.engine(Family.VLLM, Role.DECODE);
        create(pod("pod-sentinel", sentinelEngine, "decode"), status(true, true));
        String sentinel = name("pod-sentinel", sentinelEngine);
        awaitState("decode", sentinel, "active");
        assertNull(field(endpoints(), "decode", noIp, "state"), "a pod without an IP is not added");
        assertNull(field(endpoints(), "decode", unready, "state"), "a pod not ready is not added");

        pods().withName("pod-no-ip").editStatus(pod -> withStatus(pod, status(true, true)));
        pods().withName("pod-unready").editStatus(pod -> withStatus(pod, status(true, true)));
        awaitState("decode", noIp, "active");
        awaitState("decode", unready, "active");

        for (String pod : List.of("pod-no-ip", "pod-unready", "pod-sentinel")) {
            pods().withName(pod).delete();
        }
        for (String gone : List.of(noIp, unready, sentinel)) {
            awaitState("decode", gone, "retired");
        }
    }

    @Test
    void everyWatchReadsAsUp() {
        await().atMost(EVENT).untilAsserted(() -> {
            String metrics = RestAssured.given().baseUri(base.toString()).get("/q/metrics").then().statusCode(200)
                    .extract().asString();
            for (String series : List.of(
                    "handoff_discovery_watch_up{pool=\"decode\",route=\"pods\",source=\"pods\"} 1.0",
                    "handoff_discovery_watch_up{pool=\"prefill\",route=\"pods\",source=\"pods\"} 1.0",
                    "handoff_discovery_watch_up{pool=\"decode\",route=\"vllm\",source=\"endpoint-slices\"} 1.0")) {
                assertTrue(metrics.contains(series), series + " in\n" + metrics);
            }
        });
    }

    private static NonNamespaceOperation<Pod, PodList, PodResource> pods() {
        return KubernetesApiResource.client().pods().inNamespace(KubernetesDiscoveryProfile.NAMESPACE);
    }

    /** A pod as the API server holds it before the kubelet reports: its spec, with the engine's port named http. */
    private static Pod pod(String name, SimEngine engine, String pool) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(KubernetesDiscoveryProfile.NAMESPACE)
                .addToLabels(KubernetesDiscoveryProfile.SELECTOR_LABEL, KubernetesDiscoveryProfile.podPool(pool))
                .endMetadata()
                .withNewSpec().addNewContainer().withName("engine").withImage("vllm/vllm-openai")
                .addNewPort().withName("metrics").withContainerPort(9090).endPort()
                .addNewPort().withName("http").withContainerPort(port(engine)).endPort()
                .endContainer().endSpec()
                .build();
    }

    /** What the kubelet reports: the pod's IP (or none yet) and its Ready condition. */
    private static PodStatus status(boolean ip, boolean ready) {
        return new PodStatusBuilder().withPhase("Running").withPodIP(ip ? "127.0.0.1" : null)
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .build();
    }

    /** Created, then reported on through the status subresource, as the kubelet does. */
    private static void create(Pod pod, PodStatus status) {
        pods().resource(pod).create();
        pods().withName(pod.getMetadata().getName()).editStatus(p -> withStatus(p, status));
    }

    private static Pod withStatus(Pod pod, PodStatus status) {
        return new PodBuilder(pod).withStatus(status).build();
    }

    private static int port(SimEngine engine) {
        return URI.create(engine.baseUrl()).getPort();
    }

    /** The name discovery gives the engine's endpoint: pod, IP and port. */
    private static String name(String pod, SimEngine engine) {
        return pod + "_127.0.0.1_" + port(engine);
    }

    private List<GenerateCall> start(int n, int tokens) {
        List<GenerateCall> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, KubernetesDiscoveryProfile.PODS_MODEL,
                    tokens));
        }
        return calls;
    }

    private void awaitState(String pool, String endpoint, String state) {
        await().atMost(EVENT).until(() -> state.equals(field(endpoints(), pool, endpoint, "state")));
    }

    private static String field(JsonPath listed, String pool, String endpoint, String field) {
        return AdminListing.field(listed, pool, endpoint, field);
    }

    private JsonPath endpoints() {
        return AdminListing.of(base, ROUTE);
    }

    private static SimEngine prefill() {
        return SimFleetTestResource.engine(Family.VLLM, Role.PREFILL);
    }
}
