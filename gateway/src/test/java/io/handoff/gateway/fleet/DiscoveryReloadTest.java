package io.handoff.gateway.fleet;

import io.grpc.Status;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RouteReload;
import io.handoff.gateway.routing.RouteTable;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.LogCapture;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A reload against a gateway whose routes discover endpoints in Kubernetes: discovery is set up when the gateway
 * starts, so a reload must keep every route's {@code *-discovery.*} settings as they were. One that changes them
 * (another selector or scheme, a pool that stops or starts discovering, a new route that would discover) is refused
 * whole, even beside a change that would pass: the table serving stays, and the log, the metric and the admin answer
 * say which route and why.
 */
@QuarkusTest
@TestProfile(KubernetesDiscoveryProfile.class)
class DiscoveryReloadTest {

    private static final String VLLM_DECODE = "handoff.routes.vllm.decode-discovery.kubernetes.";
    private static final String REASON = "prefill-discovery and decode-discovery: discovery is set up when the "
            + "gateway starts; a reload must keep it as it was (restart to change it)";

    @TestHTTPResource("/")
    URL base;

    @Inject
    RouteRegistry routes;

    @Inject
    MeterRegistry registry;

    private GrpcTestClient client;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    /** The routes this gateway started with, discovery included, as a reload text. */
    private static Map<String, String> atStart() {
        Map<String, String> c = new TreeMap<>(SimFleetTestResource.routeProperties());
        new KubernetesDiscoveryProfile().getConfigOverrides().forEach((key, value) -> {
            if (key.startsWith("handoff.routes.")) {
                c.put(key, value);
            }
        });
        return c;
    }

    private static String text(Map<String, String> properties) {
        return properties.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n"));
    }

    /** A reload text, and the route its refusal names. */
    private record Refusal(String route, Map<String, String> routes) {
    }

    private double refusedReloads() {
        Counter counter = registry.find("handoff.routes.reloads").tags("source", "admin", "outcome", "refused")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void theRoutesAsTheyStartedDiscoveryIncludedReloadUnchanged() {
        RouteReload reload = routes.reload(text(atStart()), "admin");
        assertEquals(RouteReload.Outcome.UNCHANGED, reload.outcome(), reload.reason());
    }

    @Test
    void aReloadThatChangesAPoolsDiscoveryIsRefusedWholeAndTheRoutesServingStay() {
        Map<String, String> otherSelector = atStart();
        otherSelector.put(VLLM_DECODE + "label-selector", KubernetesDiscoveryProfile.SELECTOR_LABEL + "=elsewhere");
        Map<String, String> otherScheme = atStart();
        otherScheme.put(VLLM_DECODE + "scheme", "grpc");
        Map<String, String> stopsDiscovering = atStart();
        stopsDiscovering.keySet().removeIf(k -> k.startsWith(VLLM_DECODE));
        Map<String, String> startsDiscovering = atStart();
        startsDiscovering.put("handoff.routes.vllm.prefill-discovery.kubernetes.label-selector", "pool=vllm-prefill");
        Map<String, String> newRouteDiscovers = atStart();
        newRouteDiscovers.putAll(Map.of(
                "handoff.routes.vllm-2.model", "m-vllm-2",
                "handoff.routes.vllm-2.engine-model", SimFleetTestResource.ENGINE_MODEL,
                "handoff.routes.vllm-2.family", "vllm",
                "handoff.routes.vllm-2.prefill", "p-0=" + SimFleetTestResource.engine(Family.VLLM, Role.PREFILL)
                        .baseUrl(),
                "handoff.routes.vllm-2.options.hold-mode", "fixed",
                "handoff.routes.vllm-2.options.hold-seconds", "480",
                "handoff.routes.vllm-2.decode-discovery.kubernetes.label-selector", "pool=vllm-2-decode"));
        List<Refusal> refusals = List.of(new Refusal("vllm", otherSelector), new Refusal("vllm", otherScheme),
                new Refusal("vllm", stopsDiscovering), new Refusal("vllm", startsDiscovering),
                new Refusal("vllm-2", newRouteDiscovers));
        // beside each, a change that alone would be applied: the whole reload is refused all the same
        refusals.forEach(r -> r.routes().put("handoff.routes.sglang.max-in-flight", "7"));

        RouteTable table = routes.table();
        double refusedBefore = refusedReloads();
        for (Refusal refusal : refusals) {
            try (LogCapture log = LogCapture.of(RouteRegistry.class)) {
                JsonPath answer = RestAssured.given().baseUri(base.toString())
                        .header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY)
                        .contentType("text/plain").body(text(refusal.routes())).post("/admin/routes/reload")
                        .then().statusCode(422).extract().jsonPath();
                String reason = "route " + refusal.route() + ": " + REASON;
                assertEquals("refused", answer.getString("outcome"));
                assertEquals(table.generation(), answer.getLong("generation"));
                assertEquals(reason, answer.getString("error"));
                assertEquals(List.of("routes reload (admin) refused, generation " + table.generation()
                        + " keeps serving: " + reason), log.errors());
            }
            assertSame(table, routes.table(), "nothing changed");
        }

        assertEquals(refusedBefore + refusals.size(), refusedReloads(), "each refusal counted");
        assertEquals(1024, routes.named("sglang").orElseThrow().settings().maxInFlight());
        assertTrue(routes.named("vllm-2").isEmpty());
        // sglang's changed route was made, then let go with the refusal: the route serving it still serves
        for (String model : List.of("m-vllm", "m-sglang")) {
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, model, 4)
                    .awaitEnd().getCode(), model);
        }
    }
}
