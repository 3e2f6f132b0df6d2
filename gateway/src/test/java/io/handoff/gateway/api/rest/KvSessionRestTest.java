package io.handoff.gateway.api.rest;

import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RedisTenancyProfile;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.handoff.gateway.api.rest.RestCalls.allocate;
import static io.handoff.gateway.api.rest.RestCalls.allocateId;
import static io.handoff.gateway.api.rest.RestCalls.allocation;
import static io.handoff.gateway.api.rest.RestCalls.as;
import static io.handoff.gateway.api.rest.RestCalls.barePost;
import static io.handoff.gateway.api.rest.RestCalls.newKey;
import static io.handoff.gateway.api.rest.RestCalls.refused;
import static io.handoff.gateway.testing.RedisTenancyProfile.QUOTA_TEAM_KEY;
import static io.handoff.gateway.testing.RedisTenancyProfile.TEAM_A_KEY;
import static io.handoff.gateway.testing.RedisTenancyProfile.TEAM_B_KEY;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** /v1/kv-sessions over real HTTP on loopback, sessions in a real Redis, tenants from API keys. */
@QuarkusTest
@TestProfile(RedisTenancyProfile.class)
class KvSessionRestTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    MutableClock clock;

    @Inject
    SessionStore store;

    private long storedSessions() {
        return store.countByState().await().indefinitely().values().stream().mapToLong(Long::longValue).sum();
    }

    @Test
    void allocateAnswers201WithLocationAndTheResolvedSession() {
        Instant now = clock.instant();
        String body = "{\"request_id\":\"req-201\",\"model\":\"llama\",\"attributes\":{\"team\":\"a\",\"n\":2,"
                + "\"nested\":{\"ok\":[true]}}}";
        var created = allocate(TEAM_A_KEY, newKey(), body).statusCode(201).extract();
        JsonPath s = created.jsonPath();
        String id = s.getString("id");
        assertEquals(32, id.length());
        assertEquals("/v1/kv-sessions/" + id, created.header("Location"));
        assertEquals("req-201", s.getString("request_id"));
        assertEquals("llama", s.getString("model"));
        assertEquals("allocated", s.getString("state"));
        assertEquals(1, s.getLong("epoch"));
        assertEquals("context-first", s.getString("schedule_style"));
        assertEquals("required", s.getString("transfer_disposition"));
        assertEquals(30_000, s.getLong("lease_ms"));
        assertEquals(now.plusSeconds(30), Instant.parse(s.getString("lease_expires_at")));
        assertEquals(now, Instant.parse(s.getString("created_at")));
        assertEquals(0, s.getInt("renewals"));
        Map<String, Object> json = s.getMap("$");
        assertTrue(json.containsKey("terminal_reason") && json.get("terminal_reason") == null, json.toString());
        assertTrue(json.containsKey("tombstone_expires_at") && json.get("tombstone_expires_at") == null);
        assertEquals("a", s.getString("attributes.team"));
        assertEquals(2.0, s.getDouble("attributes.n"));
        assertEquals(List.of(true), s.getList("attributes.nested.ok"));

        String fetched = as(TEAM_A_KEY).get("/v1/kv-sessions/" + id).then().statusCode(200).extract().asString();
        assertEquals(json, JsonPath.from(fetched).getMap("$"));
    }

    @Test
    void anIdenticalRetryAnswers200WithTheSameSessionAndAConflictingOneIs409() {
        String key = newKey();
        String body = allocation();
        String id = allocate(TEAM_A_KEY, key, body).statusCode(201).extract().path("id");
        var retry = allocate(TEAM_A_KEY, key, body).statusCode(200).body("id", equalTo(id)).extract();
        assertNull(retry.header("Location"));
        long before = storedSessions();
        refused(allocate(TEAM_A_KEY, key, allocation()), 409, "idempotency_conflict", "ERROR_CODE_INVALID_ARGUMENT");
        assertEquals(before, storedSessions());
        // The key belongs to the tenant: another tenant's identical request is its own session.
        String other = allocate(TEAM_B_KEY, key, body).statusCode(201).extract().path("id");
        assertNotEquals(id, other);
    }

    @Test
    void restAndGrpcAreOneApiOverTheSameSessions() throws InterruptedException {
        String key = newKey();
        String id = allocate(TEAM_A_KEY, key, "{\"request_id\":\"r-both\",\"model\":\"llama\",\"lease_ms\":45000}")
                .statusCode(201).extract().path("id");
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()), TEAM_A_KEY);
            KvSession viaGrpc = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-both")
                    .setModel("llama").setIdempotencyKey(key)
                    .setLease(com.google.protobuf.Duration.newBuilder().setSeconds(45)).build());
            assertEquals(id, viaGrpc.getRef().getSessionId());
            KvSessionJson expected = KvSessionJson.of(viaGrpc);
            JsonPath viaRest = as(TEAM_A_KEY).get("/v1/kv-sessions/" + id).then().statusCode(200).extract()
                    .jsonPath();
            assertEquals(expected.state(), viaRest.getString("state"));
            assertEquals(expected.epoch(), viaRest.getLong("epoch"));
            assertEquals(expected.leaseMs(), viaRest.getLong("lease_ms"));
            assertEquals(expected.leaseExpiresAt(), viaRest.getString("lease_expires_at"));
            assertEquals(expected.updatedAt(), viaRest.getString("updated_at"));
        }
    }

    @Test
    void badAllocationsAreRefusedAndWriteNothing() {
        long before = storedSessions();
        refused(as(TEAM_A_KEY).body(allocation()).post("/v1/kv-sessions").then(), 400, "invalid_argument",
                "ERROR_CODE_INVALID_ARGUMENT").body("error.message", equalTo("the Idempotency-Key header is required"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\"}"), 400, "invalid_argument",
                "ERROR_CODE_INVALID_ARGUMENT").body("error.message", equalTo("model is required"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":0}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT");
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":-5}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT");
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":600001}"), 400,
                "lease_out_of_range", "ERROR_CODE_INVALID_ARGUMENT");
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":"
                + Long.MAX_VALUE + "}"), 400, "lease_out_of_range", "ERROR_CODE_INVALID_ARGUMENT");
        // The profile supports context-first and generation-first only.
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\","
                + "\"schedule_style\":\"concurrent\"}"), 409, "unsupported", "ERROR_CODE_UNSUPPORTED_FEATURE");
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\","
                + "\"schedule_style\":\"CONTEXT_FIRST\"}"), 400, "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT")
                .body("error.message", equalTo("schedule_style must be one of [context-first, generation-first, "
                        + "concurrent]; 'CONTEXT_FIRST' is not"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\","
                + "\"transfer_disposition\":\"unspecified\"}"), 400, "invalid_argument",
                "ERROR_CODE_INVALID_ARGUMENT");
        assertEquals(before, storedSessions());
    }

    @Test
    void explicitChoicesAreKept() {
        allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"schedule_style\":"
                + "\"generation-first\",\"transfer_disposition\":\"bypass\",\"lease_ms\":1500}").statusCode(201)
                .body("schedule_style", equalTo("generation-first"))
                .body("transfer_disposition", equalTo("bypass"))
                .body("lease_ms", equalTo(1500));
    }

    @Test
    void unreadableBodiesAre400InTheOpenAiShapeAndWriteNothing() {
        long before = storedSessions();
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":"), 400, "invalid_argument",
                "ERROR_CODE_INVALID_ARGUMENT").body("error.param", nullValue());
        refused(allocate(TEAM_A_KEY, newKey(), "not json"), 400, "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT");
        refused(allocate(TEAM_A_KEY, newKey(), "[]"), 400, "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT")
                .body("error.message", equalTo("the body must be a JSON object"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":\"soon\"}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("lease_ms"));
        // Coercions Jackson would make silently are refused: a string number, a fraction, a number for a string.
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":\"5000\"}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("lease_ms"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_ms\":1500.5}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("lease_ms"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":7,\"model\":\"m\"}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("request_id"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"attributes\":[1]}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("attributes"));
        refused(allocate(TEAM_A_KEY, newKey(), "{\"request_id\":\"r\",\"model\":\"m\",\"lease_msec\":5000}"), 400,
                "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("lease_msec"))
                .body("error.message", equalTo("unknown field 'lease_msec'"));
        String id = allocateId(TEAM_A_KEY);
        refused(as(TEAM_A_KEY).body("{\"expected_epoch\":\"one\"}").post("/v1/kv-sessions/" + id + "/renew").then(),
                400, "invalid_argument", "ERROR_CODE_INVALID_ARGUMENT").body("error.param", equalTo("expected_epoch"));
        assertEquals(before + 1, storedSessions());
    }

    @Test
    void whatHttpItselfRefusesIsInTheOpenAiShapeToo() {
        refused(RestAssured.given().header("Authorization", "Bearer " + TEAM_A_KEY).header("Idempotency-Key", newKey())
                .contentType("text/plain").body(allocation()).post("/v1/kv-sessions").then(), 415,
                "unsupported_media_type", null);
        refused(as(TEAM_A_KEY).put("/v1/kv-sessions/0123456789abcdef0123456789abcdef").then(), 405,
                "method_not_allowed", null);
    }

    @Test
    void anotherTenantsSessionAnswersExactlyLikeAnUnknownOne() {
        String id = allocateId(TEAM_A_KEY);
        String foreign = refused(as(TEAM_B_KEY).get("/v1/kv-sessions/" + id).then(), 404, "not_found",
                "ERROR_CODE_KV_SESSION_NOT_FOUND").extract().asString();
        String unknown = refused(as(TEAM_B_KEY).get("/v1/kv-sessions/0123456789abcdef0123456789abcdef").then(), 404,
                "not_found", "ERROR_CODE_KV_SESSION_NOT_FOUND").extract().asString();
        String malformed = as(TEAM_B_KEY).get("/v1/kv-sessions/not-an-id").then().statusCode(404).extract()
                .asString();
        assertEquals(unknown, foreign);
        assertEquals(unknown, malformed);
        refused(as(TEAM_B_KEY).post("/v1/kv-sessions/" + id + "/renew").then(), 404, "not_found",
                "ERROR_CODE_KV_SESSION_NOT_FOUND");
        refused(as(TEAM_B_KEY).post("/v1/kv-sessions/" + id + "/release").then(), 404, "not_found",
                "ERROR_CODE_KV_SESSION_NOT_FOUND");
        as(TEAM_A_KEY).get("/v1/kv-sessions/" + id).then().statusCode(200).body("state", equalTo("allocated"));
    }

    @Test
    void renewExtendsTheLeaseFromNowAndKeepsTheEpoch() {
        String id = allocateId(TEAM_A_KEY);
        clock.advance(Duration.ofSeconds(10));
        JsonPath renewed = as(TEAM_A_KEY).body("{\"lease_ms\":120000,\"expected_epoch\":1}")
                .post("/v1/kv-sessions/" + id + "/renew").then().statusCode(200).extract().jsonPath();
        assertEquals(clock.instant().plusSeconds(120), Instant.parse(renewed.getString("lease_expires_at")));
        assertEquals(120_000, renewed.getLong("lease_ms"));
        assertEquals(1, renewed.getInt("renewals"));
        assertEquals(1, renewed.getLong("epoch"));
        // No body at all: the default lease.
        var bare = barePost("/v1/kv-sessions/" + id + "/renew", "x-api-key", TEAM_A_KEY);
        assertEquals(200, bare.statusCode(), bare.body());
        JsonPath again = JsonPath.from(bare.body());
        assertEquals(clock.instant().plusSeconds(30), Instant.parse(again.getString("lease_expires_at")));
        assertEquals(2, again.getInt("renewals"));
        refused(as(TEAM_A_KEY).body("{\"expected_epoch\":7}").post("/v1/kv-sessions/" + id + "/renew").then(), 409,
                "stale_epoch", "ERROR_CODE_INVALID_ARGUMENT");
        refused(as(TEAM_A_KEY).body("{\"lease_ms\":600001}").post("/v1/kv-sessions/" + id + "/renew").then(), 400,
                "lease_out_of_range", "ERROR_CODE_INVALID_ARGUMENT");
        as(TEAM_A_KEY).get("/v1/kv-sessions/" + id).then().body("renewals", equalTo(2));
    }

    @Test
    void releaseIsIdempotentAndFenced() {
        String id = allocateId(TEAM_A_KEY);
        refused(as(TEAM_A_KEY).body("{\"expected_epoch\":5}").post("/v1/kv-sessions/" + id + "/release").then(),
                409, "stale_epoch", "ERROR_CODE_INVALID_ARGUMENT");
        JsonPath first = as(TEAM_A_KEY).body("{\"reason\":\"decode finished\",\"expected_epoch\":1}")
                .post("/v1/kv-sessions/" + id + "/release").then().statusCode(200).extract().jsonPath();
        assertFalse(first.getBoolean("already_terminal"));
        assertEquals("released", first.getString("session.state"));
        assertEquals(2, first.getLong("session.epoch"));
        assertEquals("decode finished", first.getString("session.terminal_reason"));
        assertNotNull(first.getString("session.tombstone_expires_at"));
        // A retried release, even one naming the epoch before the first, answers the same session.
        JsonPath second = as(TEAM_A_KEY).body("{\"expected_epoch\":1}").post("/v1/kv-sessions/" + id + "/release")
                .then().statusCode(200).extract().jsonPath();
        assertTrue(second.getBoolean("already_terminal"));
        assertEquals(first.getMap("session"), second.getMap("session"));
        refused(as(TEAM_A_KEY).post("/v1/kv-sessions/" + id + "/renew").then(), 409, "not_live",
                "ERROR_CODE_KV_SESSION_NOT_FOUND");
        as(TEAM_A_KEY).get("/v1/kv-sessions/" + id).then().statusCode(200).body("state", equalTo("released"));
    }

    @Test
    void aTenantAtItsQuotaIs429() {
        List<String> live = new ArrayList<>();
        try {
            for (int i = 0; i < RedisTenancyProfile.QUOTA; i++) {
                live.add(allocateId(QUOTA_TEAM_KEY));
            }
            refused(allocate(QUOTA_TEAM_KEY, newKey(), allocation()), 429, "quota_exceeded",
                    "ERROR_CODE_OVERLOADED");
        } finally {
            live.forEach(id -> as(QUOTA_TEAM_KEY).post("/v1/kv-sessions/" + id + "/release").then()
                    .statusCode(200));
        }
        as(QUOTA_TEAM_KEY).post("/v1/kv-sessions/" + allocateId(QUOTA_TEAM_KEY) + "/release").then()
                .statusCode(200);
    }

    @Test
    void aRedisOutageIs503() {
        RedisTestResource.server().stop();
        try {
            refused(allocate(TEAM_A_KEY, newKey(), allocation()), 503, "store_unavailable", "ERROR_CODE_OVERLOADED");
        } finally {
            RedisTestResource.server().start();
        }
        allocate(TEAM_A_KEY, newKey(), allocation()).statusCode(201);
    }
}
