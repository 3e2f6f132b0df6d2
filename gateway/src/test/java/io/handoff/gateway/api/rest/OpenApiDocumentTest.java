package io.handoff.gateway.api.rest;

import io.handoff.gateway.testing.RedisTenancyProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** /q/openapi answers on the port it shares with gRPC, without an API key, and describes /v1/kv-sessions. */
@QuarkusTest
@TestProfile(RedisTenancyProfile.class)
class OpenApiDocumentTest {

    @Test
    void theDocumentListsTheSessionPathsAndTheirAnswers() {
        JsonPath doc = RestAssured.given().accept("application/json").get("/q/openapi?format=json").then()
                .statusCode(200).extract().jsonPath();
        Set<String> paths = doc.<String, Object>getMap("paths").keySet();
        assertEquals(Set.of("/v1/kv-sessions", "/v1/kv-sessions/{id}", "/v1/kv-sessions/{id}/renew",
                "/v1/kv-sessions/{id}/release"), paths);
        Set<String> allocate = doc.<String, Object>getMap("paths.'/v1/kv-sessions'.post.responses").keySet();
        assertTrue(allocate.containsAll(Set.of("200", "201", "400", "401", "403", "409", "429", "503")),
                allocate.toString());
        List<String> headers = doc.getList("paths.'/v1/kv-sessions'.post.parameters.name");
        assertEquals(List.of("Idempotency-Key"), headers);
        assertEquals("#/components/schemas/KvSession",
                doc.getString("paths.'/v1/kv-sessions'.post.responses.'201'.content.'application/json'.schema.$ref"));
        // Renew and release may be sent without a body.
        assertNotEquals(Boolean.TRUE, doc.get("paths.'/v1/kv-sessions/{id}/renew'.post.requestBody.required"));
        assertNotEquals(Boolean.TRUE, doc.get("paths.'/v1/kv-sessions/{id}/release'.post.requestBody.required"));
        assertTrue(doc.getMap("components.schemas.KvSession.properties").containsKey("lease_expires_at"));
        assertTrue(doc.getMap("components.schemas").containsKey("Error"));
    }
}
