package io.handoff.gateway.fleet;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.gateway.testing.SpareDecodeEngine;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.vertx.core.Vertx;

import java.net.URL;

/** What the discovery tests share: a route's endpoints as the admin API lists them, and a decode engine of their own. */
final class AdminListing {

    private AdminListing() {
    }

    /** {@code GET /admin/routes/{route}/endpoints}, with the admin key. */
    static JsonPath of(URL base, String route) {
        return RestAssured.given().baseUri(base.toString())
                .header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY)
                .get("/admin/routes/" + route + "/endpoints").then().statusCode(200).extract().jsonPath();
    }

    /** A field of one endpoint of a pool in such a listing; null when the pool has no endpoint of that name. */
    static String field(JsonPath listed, String pool, String endpoint, String field) {
        return listed.param("n", endpoint).getString("pools." + pool + ".find { it.name == n }." + field);
    }

    /** A simulated vLLM decode engine serving the fleet's model at 20 ms a token, on the fleet's decode clock. */
    static SimEngine decodeEngine(Vertx vertx) {
        return SpareDecodeEngine.start(vertx, SimFleetTestResource.engine(Family.VLLM, Role.DECODE).clock());
    }
}
