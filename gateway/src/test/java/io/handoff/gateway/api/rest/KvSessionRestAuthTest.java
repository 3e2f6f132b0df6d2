package io.handoff.gateway.api.rest;

import io.handoff.gateway.testing.RedisTenancyProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import static io.handoff.gateway.api.rest.RestCalls.allocate;
import static io.handoff.gateway.api.rest.RestCalls.allocateId;
import static io.handoff.gateway.api.rest.RestCalls.allocation;
import static io.handoff.gateway.api.rest.RestCalls.newKey;
import static io.handoff.gateway.api.rest.RestCalls.refused;
import static org.hamcrest.Matchers.equalTo;

/** Callers of /v1/kv-sessions are established from API keys exactly as on gRPC, before the body is read. */
@QuarkusTest
@TestProfile(RedisTenancyProfile.class)
class KvSessionRestAuthTest {

    @Test
    void aMissingOrUnknownKeyIs401() {
        refused(RestAssured.given().contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body(allocation()).post("/v1/kv-sessions").then(), 401, "unauthenticated", null)
                .header("WWW-Authenticate", "Bearer");
        refused(allocate("not-a-key", newKey(), allocation()), 401, "unauthenticated", null);
        refused(RestAssured.given().header("Authorization", "Basic " + RedisTenancyProfile.TEAM_A_KEY)
                .get("/v1/kv-sessions/0123456789abcdef0123456789abcdef").then(), 401, "unauthenticated", null);
    }

    @Test
    void authenticationComesBeforeTheBodyIsRead() {
        refused(allocate("not-a-key", newKey(), "{\"request_id\":"), 401, "unauthenticated", null);
    }

    @Test
    void anAdminKeyIs403OnSessions() {
        refused(allocate(RedisTenancyProfile.ADMIN_KEY, newKey(), allocation()), 403, "permission_denied", null)
                .body("error.message", equalTo("admin keys manage the deployment; KV sessions belong to tenants"));
        String id = allocateId(RedisTenancyProfile.TEAM_A_KEY);
        refused(RestAssured.given().header("x-api-key", RedisTenancyProfile.ADMIN_KEY).get("/v1/kv-sessions/" + id)
                .then(), 403, "permission_denied", null);
    }

    @Test
    void theXApiKeyHeaderAuthenticatesToo() {
        String id = allocateId(RedisTenancyProfile.TEAM_A_KEY);
        RestAssured.given().header("x-api-key", RedisTenancyProfile.TEAM_A_KEY).get("/v1/kv-sessions/" + id).then()
                .statusCode(200).body("id", equalTo(id));
    }
}
