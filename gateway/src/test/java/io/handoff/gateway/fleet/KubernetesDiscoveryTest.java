package io.handoff.gateway.fleet;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList;
import io.grpc.Status;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.KubernetesApiResource;
import io.handoff.gateway.testing.MutableClock;
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
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.URL;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Decode endpoints of route {@code vllm} found through EndpointSlices on fabric8's mock API server (CRUD mode), each
 * pointing at a simulated vLLM decode engine: under load, one is added, one made unready and one removed. New legs
 * reach only ready endpoints, legs running on one that leaves finish, no simulator keeps KV pinned afterwards, and
 * the admin API lists the discovered ones with source {@code kubernetes}. Slices the selector does not choose are
 * ignored; an endpoint the pool refuses is counted and left out. Pods that come and go under new names are let go once
 * nothing owed on them can be due, so the retired ones stay few, and a pod that comes back after that joins afresh.
 */
@QuarkusTest
@TestProfile(KubernetesDiscoveryProfile.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesDiscoveryTest {

    private static final Duration EVENT = Duration.ofSeconds(20);

    @TestHTTPResource("/")
    URL base;

    @Inject
    RouteRegistry routes;

    @Inject
    Clock clock;

    private GrpcTestClient client;
    private Vertx vertx;
    private SimEngine engineA;
    private SimEngine engineB;
    private SimEngine engineC;

    @BeforeAll
    void startTwoDecodeEngines() {
        vertx = Vertx.vertx();
        engineA = decodeEngine();
        engineB = decodeEngine();
        engineC = decodeEngine();
    }

    private SimEngine decodeEngine() {
        return AdminListing.decodeEngine(vertx);
    }

    @AfterAll
    void stopThem() {
        engineA.stopBlocking();
        engineB.stopBlocking();
        engineC.stopBlocking();
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
    void endpointsThatComeAndGoUnderLoadTakeLegsOnlyWhileReadyAndLeakNoKv() {
        String a = name("sim-a", engineA);
        String b = name("sim-b", engineB);
        slices().resource(slice("sim-a", "sim-a", engineA, KubernetesDiscoveryProfile.SELECTOR_VALUE, true))
                .create();
        awaitState(a, "active");
        JsonPath joined = endpoints();
        assertEquals("kubernetes", decodeField(joined, a, "source"));
        assertEquals("http://127.0.0.1:" + port(engineA), decodeField(joined, a, "url"));
        assertEquals("static", decodeField(joined, "d-0", "source"));

        // load on d-0 and a: 8 streams of 40 tokens at 20 ms a token
        List<GenerateCall> running = start(8, 40);
        running.forEach(GenerateCall::awaitFirstToken);
        assertTrue(engineA.stat("requests_total") > 0, "the discovered endpoint took legs");

        // while they run, b joins and a turns unready
        slices().resource(slice("sim-b", "sim-b", engineB, KubernetesDiscoveryProfile.SELECTOR_VALUE, true))
                .create();
        slices().withName("sim-a").edit(s -> withReady(s, false));
        awaitState(b, "active");
        awaitState(a, "retired");
        long aSeen = engineA.stat("requests_total");
        List<GenerateCall> whileBServes = start(6, 40);
        whileBServes.forEach(GenerateCall::awaitFirstToken);
        assertTrue(engineB.stat("requests_total") > 0, "the endpoint that joined under load took legs");

        // b is removed while its legs run
        slices().withName("sim-b").delete();
        awaitState(b, "retired");
        long bSeen = engineB.stat("requests_total");
        List<GenerateCall> afterB = start(4, 4);

        for (List<GenerateCall> calls : List.of(running, whileBServes)) {
            for (GenerateCall call : calls) {
                assertEquals(Status.Code.OK, call.awaitEnd().getCode(), "a running stream finishes");
                assertEquals(40, call.events().stream().filter(e -> e.hasToken()).count());
            }
        }
        afterB.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertEquals(aSeen, engineA.stat("requests_total"), "no new leg reached the unready endpoint");
        assertEquals(bSeen, engineB.stat("requests_total"), "no new leg reached the removed endpoint");

        JsonPath listed = endpoints();
        assertEquals(List.of("active", "static"), List.of(decodeField(listed, "d-0", "state"),
                decodeField(listed, "d-0", "source")));
        for (String gone : List.of(a, b)) {
            assertEquals(List.of("retired", "kubernetes", "0"), List.of(decodeField(listed, gone, "state"),
                    decodeField(listed, gone, "source"), decodeField(listed, gone, "outstanding")),
                    "its legs all ended");
        }
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, prefill().stat("kv_blocks_pinned_now"));
            assertEquals(0, decode().stat("kv_blocks_pinned_now"));
            assertEquals(0, engineA.stat("kv_blocks_pinned_now"));
            assertEquals(0, engineB.stat("kv_blocks_pinned_now"));
        });

        // a ready again comes back under its name, and takes legs again
        slices().withName("sim-a").edit(s -> withReady(s, true));
        awaitState(a, "active");
        slices().withName("sim-a").delete();
        awaitState(a, "retired");
    }

    @Test
    void podsThatComeAndGoUnderNewNamesAreLetGoSoTheRetiredStayFewAndOneThatComesBackJoinsAfresh() {
        Route route = routes.named("vllm").orElseThrow();
        Duration keep = routes.retiredEndpointKeep(route);
        int mostRetired = 0;
        for (int i = 0; i < 6; i++) {
            // a pod of a Deployment, replaced by one of another name: offered, served, then gone
            String pod = "churn-" + i;
            slices().resource(slice(pod, pod, engineC, KubernetesDiscoveryProfile.SELECTOR_VALUE, true)).create();
            awaitState(name(pod, engineC), "active");
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                    .awaitEnd().getCode());
            slices().withName(pod).delete();
            awaitState(name(pod, engineC), "retired");
            await().atMost(EVENT).until(() -> "0".equals(decodeField(endpoints(), name(pod, engineC),
                    "outstanding")));
            mostRetired = Math.max(mostRetired, churned("retired").size());
            // time passes between one pod's going and the next one's: more than a keep
            ((MutableClock) clock).advance(keep);
            routes.letGo();
        }
        assertEquals(1, mostRetired, "one retired pod at a time, however many came and went");
        assertEquals(List.of(), churned("retired"), "every pod that left was let go");

        // a pod that comes back under its name after it was let go joins afresh and takes legs
        String back = name("churn-0", engineC);
        slices().resource(slice("churn-0", "churn-0", engineC, KubernetesDiscoveryProfile.SELECTOR_VALUE, true))
                .create();
        awaitState(back, "active");
        assertEquals("kubernetes", decodeField(endpoints(), back, "source"));
        long seen = engineC.stat("requests_total");
        for (int i = 0; i < 4; i++) {
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                    .awaitEnd().getCode());
        }
        assertTrue(engineC.stat("requests_total") > seen, "the pod that came back took legs");
        slices().withName("churn-0").delete();
        awaitState(back, "retired");
    }

    /** The names of the decode pool's churned pods, in one state. */
    private List<String> churned(String state) {
        JsonPath listed = endpoints();
        return listed.getList("pools.decode.name", String.class).stream()
                .filter(n -> n.startsWith("churn-") && state.equals(decodeField(listed, n, "state"))).toList();
    }

    @Test
    void slicesTheSelectorDoesNotChooseAreIgnoredAndARefusedEndpointIsCountedAndLeftOut() {
        double refusedBefore = refusals();
        // another pool's slice, and one whose pod name cannot be an endpoint name
        slices().resource(slice("other-pool", "sim-other", engineB, "sglang-decode", true)).create();
        slices().resource(slice("bad-name", "sim bad", engineB, KubernetesDiscoveryProfile.SELECTOR_VALUE, true))
                .create();
        await().atMost(EVENT).until(() -> refusals() == refusedBefore + 1);
        List<String> names = endpoints().getList("pools.decode.name");
        assertFalse(names.stream().anyMatch(n -> n.startsWith("sim-other") || n.startsWith("sim bad")), names
                .toString());
        slices().withName("other-pool").delete();
        slices().withName("bad-name").delete();
    }

    @Test
    void aDiscoveredEndpointServingAnotherModelIsTrippedByItsFirstSampleAndTakesNoLeg() {
        SimEngine otherModel = SimFleetTestResource.engines().get(SimFleetTestResource.engines().size() - 1);
        slices().resource(slice("wrong-model", "sim-wrong", otherModel, KubernetesDiscoveryProfile.SELECTOR_VALUE,
                true)).create();
        String wrong = name("sim-wrong", otherModel);
        await().atMost(EVENT).until(() -> "open".equals(decodeField(endpoints(), wrong, "breaker")));
        assertEquals("unhealthy", decodeField(endpoints(), wrong, "health"));
        long seen = otherModel.stat("requests_total");
        List<GenerateCall> calls = start(4, 4);
        calls.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertEquals(seen, otherModel.stat("requests_total"), "the engine serving another model took no leg");
        slices().withName("wrong-model").delete();
        awaitState(wrong, "retired");
    }

    @Test
    void aRouteWhosePoolsAreWhollyDiscoveredRefusesUntilEndpointsAreReadyThenServes() {
        GenerateCall early = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY,
                KubernetesDiscoveryProfile.DISCOVERED_MODEL, 4);
        assertEquals(Status.Code.UNAVAILABLE, early.awaitEnd().getCode(), "no endpoint yet");

        slices().resource(slice("discovered-p", "sim-p", prefill(), KubernetesDiscoveryProfile.onlyPool("prefill"),
                true)).create();
        slices().resource(slice("discovered-d", "sim-c", engineC, KubernetesDiscoveryProfile.onlyPool("decode"),
                true)).create();
        String p = name("sim-p", prefill());
        String d = name("sim-c", engineC);
        await().atMost(EVENT).until(() -> "active".equals(discoveredState("prefill", p))
                && "active".equals(discoveredState("decode", d)));
        List<GenerateCall> calls = start(KubernetesDiscoveryProfile.DISCOVERED_MODEL, 4, 8);
        calls.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertEquals(4, engineC.stat("requests_total"), "every decode leg reached the discovered engine");

        slices().withName("discovered-p").delete();
        slices().withName("discovered-d").delete();
        await().atMost(EVENT).until(() -> "retired".equals(discoveredState("prefill", p))
                && "retired".equals(discoveredState("decode", d)));
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, prefill().stat("kv_blocks_pinned_now"));
            assertEquals(0, engineC.stat("kv_blocks_pinned_now"));
        });
    }

    private static NonNamespaceOperation<EndpointSlice, EndpointSliceList, Resource<EndpointSlice>> slices() {
        return KubernetesApiResource.client().discovery().v1().endpointSlices()
                .inNamespace(KubernetesDiscoveryProfile.NAMESPACE);
    }

    private static EndpointSlice slice(String name, String pod, SimEngine engine, String pool, boolean ready) {
        return new EndpointSliceBuilder()
                .withNewMetadata().withName(name).withNamespace(KubernetesDiscoveryProfile.NAMESPACE)
                .addToLabels(KubernetesDiscoveryProfile.SELECTOR_LABEL, pool).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("http").withProtocol("TCP").withPort(port(engine)).endPort()
                .addNewEndpoint().withAddresses("127.0.0.1")
                .withNewConditions().withReady(ready).withServing(ready).withTerminating(false).endConditions()
                .withNewTargetRef().withKind("Pod").withName(pod).withNamespace(KubernetesDiscoveryProfile.NAMESPACE)
                .endTargetRef().endEndpoint()
                .build();
    }

    private static EndpointSlice withReady(EndpointSlice s, boolean ready) {
        return new EndpointSliceBuilder(s).editFirstEndpoint().editConditions().withReady(ready).withServing(ready)
                .endConditions().endEndpoint().build();
    }

    private static int port(SimEngine engine) {
        return URI.create(engine.baseUrl()).getPort();
    }

    /** The name discovery gives the engine's endpoint: pod, address and port. */
    private static String name(String pod, SimEngine engine) {
        return pod + "_127.0.0.1_" + port(engine);
    }

    private List<GenerateCall> start(int n, int tokens) {
        return start("m-vllm", n, tokens);
    }

    private List<GenerateCall> start(String model, int n, int tokens) {
        List<GenerateCall> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, model, tokens));
        }
        return calls;
    }

    private void awaitState(String endpoint, String state) {
        await().atMost(EVENT).until(() -> state.equals(decodeField(endpoints(), endpoint, "state")));
    }

    private String discoveredState(String pool, String endpoint) {
        return field(endpoints(KubernetesDiscoveryProfile.DISCOVERED_ROUTE), pool, endpoint, "state");
    }

    private static String decodeField(JsonPath listed, String endpoint, String field) {
        return field(listed, "decode", endpoint, field);
    }

    private static String field(JsonPath listed, String pool, String endpoint, String field) {
        return AdminListing.field(listed, pool, endpoint, field);
    }

    private JsonPath endpoints() {
        return endpoints("vllm");
    }

    private JsonPath endpoints(String route) {
        return AdminListing.of(base, route);
    }

    private double refusals() {
        String metrics = RestAssured.given().baseUri(base.toString()).get("/q/metrics").then().statusCode(200)
                .extract().asString();
        Matcher m = Pattern.compile("(?m)^handoff_pool_endpoints_refused_total\\{([^}]*)} (\\S+)$").matcher(metrics);
        while (m.find()) {
            if (m.group(1).contains("route=\"vllm\"") && m.group(1).contains("pool=\"decode\"")
                    && m.group(1).contains("source=\"kubernetes\"")) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no handoff_pool_endpoints_refused_total for vllm/decode");
    }

    private static SimEngine prefill() {
        return SimFleetTestResource.engine(Family.VLLM, Role.PREFILL);
    }

    private static SimEngine decode() {
        return SimFleetTestResource.engine(Family.VLLM, Role.DECODE);
    }
}
