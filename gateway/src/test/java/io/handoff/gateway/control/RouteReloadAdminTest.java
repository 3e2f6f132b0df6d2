package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.LogCapture;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The route table over the admin API: {@code GET /admin/routes} shows what serves, {@code POST
 * /admin/routes/reload} swaps in new routes (200) or refuses them whole (422, the old generation serving), and only
 * an admin key reads or reloads anything.
 */
@QuarkusTest
@TestProfile(RouteReloadProfile.class)
class RouteReloadAdminTest extends ControlPlaneTest {

    private RequestSpecification http() {
        return RestAssured.given().baseUri(base.toString());
    }

    private RequestSpecification admin() {
        return http().header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY);
    }

    private JsonPath table() {
        return admin().get("/admin/routes").then().statusCode(200).extract().jsonPath();
    }

    private JsonPath reload(Map<String, String> routes, int status) {
        return admin().contentType("text/plain").body(RouteReloadTest.text(routes)).post("/admin/routes/reload")
                .then().statusCode(status).extract().jsonPath();
    }

    @Inject
    MeterRegistry registry;

    private double refusedReloads() {
        Counter counter = registry.find("handoff.routes.reloads").tags("source", "admin", "outcome", "refused")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @AfterEach
    void backToTheBaseline() {
        reload(SimFleetTestResource.routeProperties(), 200);
    }

    @Test
    void onlyAnAdminKeyReadsOrReloadsTheTable() {
        String before = table().prettify();
        String body = RouteReloadTest.text(RouteReloadTest.withSecondRoute());
        http().get("/admin/routes").then().statusCode(401);
        http().header("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY).get("/admin/routes").then()
                .statusCode(403);
        http().contentType("text/plain").body(body).post("/admin/routes/reload").then().statusCode(401);
        http().header("x-api-key", ControlPlaneProfile.TEAM_B_KEY).contentType("text/plain").body(body)
                .post("/admin/routes/reload").then().statusCode(403);
        assertEquals(before, table().prettify(), "a refused call changes nothing");
    }

    @Test
    void theTableShowsTheGenerationRoutesPoolsAndEndpoints() {
        JsonPath table = table();
        assertTrue(table.getLong("generation") >= 1);
        assertEquals(List.of("sglang", "trtllm", "vllm", "wrong-model", "wrong-role"),
                table.getList("routes.name", String.class).stream().sorted().toList());
        String vllm = "routes.find { it.name == 'vllm' }";
        assertEquals("m-vllm", table.getString(vllm + ".model"));
        assertEquals("vllm", table.getString(vllm + ".family"));
        assertEquals(List.of("context-first"), table.getList(vllm + ".styles"));
        assertEquals(List.of("p-0"), table.getList(vllm + ".pools.prefill.name"));
        assertEquals(List.of("d-0"), table.getList(vllm + ".pools.decode.name"));
        assertEquals(SimFleetTestResource.engine(Family.VLLM, Role.DECODE).baseUrl(),
                table.getString(vllm + ".pools.decode[0].url"), "the admin API shows the addresses it was given");
    }

    @Test
    void aReloadAnswersTheNewGenerationAndServesTheNewRoutes() {
        long before = table().getLong("generation");

        JsonPath answer = reload(RouteReloadTest.withSecondRoute(), 200);

        assertEquals("applied", answer.getString("outcome"));
        assertEquals(before + 1, answer.getLong("generation"));
        assertEquals(List.of("vllm-2"), answer.getList("added"));
        JsonPath table = table();
        assertEquals(before + 1, table.getLong("generation"));
        assertTrue(table.getList("routes.name").contains("vllm-2"));
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm-2", 4)
                .awaitEnd().getCode());
        assertEquals("unchanged", reload(RouteReloadTest.withSecondRoute(), 200).getString("outcome"));
    }

    @Test
    void aRefusedReloadIs422WithTheReasonAndTheGenerationThatKeepsServing() {
        String before = table().prettify();
        long generation = table().getLong("generation");
        Map<String, String> routes = new HashMap<>(SimFleetTestResource.routeProperties());
        // one name for two engines: negotiation's message names both addresses, the answer names neither
        routes.putAll(Map.of(
                "handoff.routes.vllm-3.model", "m-vllm-3",
                "handoff.routes.vllm-3.family", "vllm",
                "handoff.routes.vllm-3.prefill", "x-0=" + SimFleetTestResource.engine(Family.VLLM, Role.PREFILL)
                        .baseUrl(),
                "handoff.routes.vllm-3.decode", "x-0=" + SimFleetTestResource.engine(Family.VLLM, Role.DECODE)
                        .baseUrl(),
                "handoff.routes.vllm-3.options.hold-mode", "fixed",
                "handoff.routes.vllm-3.options.hold-seconds", "480"));

        double refusedBefore = refusedReloads();
        JsonPath refused;
        List<String> logged;
        try (LogCapture log = LogCapture.of(RouteRegistry.class)) {
            refused = reload(routes, 422);
            logged = log.errors();
        }

        assertEquals("refused", refused.getString("outcome"));
        assertEquals(generation, refused.getLong("generation"));
        String error = refused.getString("error");
        assertTrue(error.startsWith("route vllm-3: prefill and decode: endpoint name 'x-0' names both"), error);
        assertFalse(error.contains("127.0.0.1") || error.contains("localhost"), error);
        assertEquals(refusedBefore + 1, refusedReloads(), "the metric counts it");
        // the operator's log says the same, with the addresses the client is not told
        assertEquals(1, logged.size(), logged.toString());
        String line = logged.get(0);
        assertTrue(line.startsWith("routes reload (admin) refused, generation " + generation
                + " keeps serving: route vllm-3: prefill and decode: endpoint name 'x-0' names both"), line);
        assertTrue(line.contains(SimFleetTestResource.engine(Family.VLLM, Role.PREFILL).baseUrl()), line);
        assertEquals(before, table().prettify(), "nothing changed");

        String empty = admin().contentType("text/plain").body("").post("/admin/routes/reload").then()
                .statusCode(422).extract().jsonPath().getString("error");
        assertTrue(empty.contains("no route"), empty);
        assertEquals(before, table().prettify(), "nothing changed");
    }
}
