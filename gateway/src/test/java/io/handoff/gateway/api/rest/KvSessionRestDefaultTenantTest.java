package io.handoff.gateway.api.rest;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** With auth off (the default), every REST caller is the default tenant, whatever key it presents or omits. */
@QuarkusTest
class KvSessionRestDefaultTenantTest {

    @Test
    void callersWithAnyOrNoKeyShareTheDefaultTenant() {
        String id = RestAssured.given().contentType(ContentType.JSON).header("Idempotency-Key", "k-default")
                .body("{\"request_id\":\"r1\",\"model\":\"demo\"}").post("/v1/kv-sessions").then().statusCode(201)
                .extract().path("id");
        RestAssured.given().header("Authorization", "Bearer anything").get("/v1/kv-sessions/" + id).then()
                .statusCode(200).body("state", equalTo("allocated"));
        var released = RestCalls.barePost("/v1/kv-sessions/" + id + "/release", "x-api-key", "something-else");
        assertEquals(200, released.statusCode(), released.body());
        assertEquals("released", JsonPath.from(released.body()).getString("session.state"));
    }
}
