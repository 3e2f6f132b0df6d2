package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.gateway.testing.SpareDecodeEngine;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admin API over a route's pools, against simulated vLLM engines: an endpoint added by hand takes legs, one
 * retired under load finishes the legs it runs and takes no new one, no KV stays pinned anywhere afterwards, and
 * only an admin key changes anything; input that cannot be an endpoint is refused and changes nothing. A retired
 * endpoint is listed with when it may be let go, kept while legs run on it and while KV owed on it can be due, then
 * let go (logged, counted), after which its name may join again.
 */
@QuarkusTest
@TestProfile(PoolEndpointsAdminTest.Profile.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PoolEndpointsAdminTest extends ControlPlaneTest {

    /** The control-plane profile in a gateway of its own: these tests change the vLLM route's pools. */
    public static class Profile extends ControlPlaneProfile {
    }

    @Inject
    RouteRegistry routes;

    @Inject
    Clock clock;

    @Inject
    MeterRegistry registry;

    @Inject
    SessionService sessions;

    @Inject
    SessionStore store;

    @Inject
    Reaper reaper;

    private SpareDecodeEngine spare;
    private SimEngine secondDecode;

    @BeforeAll
    void startASecondDecodeEngine() {
        spare = SpareDecodeEngine.vllm(decode().clock());
        secondDecode = spare.engine();
    }

    @AfterAll
    void stopIt() {
        spare.close();
    }

    private static SimEngine prefill() {
        return SimFleetTestResource.engine(Family.VLLM, Role.PREFILL);
    }

    private static SimEngine decode() {
        return SimFleetTestResource.engine(Family.VLLM, Role.DECODE);
    }

    private RequestSpecification http() {
        return RestAssured.given().baseUri(base.toString());
    }

    private RequestSpecification admin() {
        return http().header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY);
    }

    private JsonPath endpoints() {
        return admin().get("/admin/routes/vllm/endpoints").then().statusCode(200).extract().jsonPath();
    }

    private static String body(String name, String url) {
        return new JsonObject().put("name", name).put("url", url).encode();
    }

    @Test
    void onlyAnAdminKeyListsAddsOrRetires() {
        String before = endpoints().prettify();
        String add = body("d-9", secondDecode.baseUrl());
        http().get("/admin/routes/vllm/endpoints").then().statusCode(401);
        http().contentType("application/json").body(add).post("/admin/routes/vllm/pools/decode/endpoints").then()
                .statusCode(401);
        http().header("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY).contentType("application/json")
                .body(add).post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(403);
        http().header("x-api-key", "not-a-key").delete("/admin/routes/vllm/pools/decode/endpoints/d-0").then()
                .statusCode(403);
        assertEquals(before, endpoints().prettify(), "a refused call changes nothing");
    }

    @Test
    void inputThatCannotBeAnEndpointIsRefusedAndChangesNothing() {
        String before = endpoints().prettify();
        String url = secondDecode.baseUrl();
        record Bad(String path, String body, int status) {
        }
        for (Bad bad : List.of(
                new Bad("/admin/routes/no-such/pools/decode/endpoints", body("d-9", url), 404),
                new Bad("/admin/routes/vllm/pools/middle/endpoints", body("d-9", url), 404),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", body("d-9", "not a url"), 400),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", body("d-9", "engine-host-only"), 400),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", body("d 9", url), 400),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", "{\"name\": \"d-9\"}", 400),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", "[1, 2]", 400),
                // a name in use: in the same pool, and in the other pool for another engine
                new Bad("/admin/routes/vllm/pools/decode/endpoints", body("d-0", url), 409),
                new Bad("/admin/routes/vllm/pools/decode/endpoints", body("p-0", url), 409))) {
            String error = admin().contentType("application/json").body(bad.body()).post(bad.path()).then()
                    .statusCode(bad.status()).extract().jsonPath().getString("error");
            assertFalse(error.contains("127.0.0.1") || error.contains("localhost"), error);
        }
        admin().delete("/admin/routes/vllm/pools/decode/endpoints/no-such").then().statusCode(404);
        admin().delete("/admin/routes/no-such/pools/decode/endpoints/d-0").then().statusCode(404);
        assertEquals(before, endpoints().prettify(), "a refused call changes nothing");
    }

    @Test
    void anEndpointRetiredUnderLoadFinishesItsLegsAndTakesNoNewOneAndNoKvStaysPinned() {
        JsonPath added = admin().contentType("application/json").body(body("d-1", secondDecode.baseUrl()))
                .post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(201).extract().jsonPath();
        assertEquals("admin", added.getString("source"));
        assertEquals("active", added.getString("state"));
        assertEquals("healthy", added.getString("health"), added.prettify());

        // under load on both decode endpoints: 8 streams of 40 tokens at 20 ms a token
        List<GenerateCall> running = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            running.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 40));
        }
        running.forEach(GenerateCall::awaitFirstToken);
        assertTrue(secondDecode.stat("requests_total") > 0, "the added endpoint took legs");
        JsonPath retired = admin().delete("/admin/routes/vllm/pools/decode/endpoints/d-0").then().statusCode(200)
                .extract().jsonPath();
        assertEquals("retired", retired.getString("state"));
        assertTrue(retired.getInt("outstanding") > 0, "legs were running on it: " + retired.prettify());
        // and while they finish, new requests go to the endpoint that stays
        long retiredSeen = decode().stat("requests_total");
        List<GenerateCall> after = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            after.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4));
        }
        for (GenerateCall call : running) {
            assertEquals(Status.Code.OK, call.awaitEnd().getCode(), "a leg on the retired endpoint finishes");
            assertEquals(40, call.events().stream().filter(e -> e.hasToken()).count());
        }
        after.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        assertEquals(retiredSeen, decode().stat("requests_total"), "no new leg reached the retired endpoint");

        JsonPath listed = endpoints();
        assertEquals(List.of("p-0"), listed.getList("pools.prefill.name"));
        assertEquals(List.of("d-1", "d-0"), listed.getList("pools.decode.name"));
        assertEquals(List.of("active", "retired"), listed.getList("pools.decode.state"));
        assertEquals(List.of("static", "admin"), List.of(listed.getString("pools.prefill[0].source"),
                listed.getString("pools.decode[0].source")));
        assertEquals(0, listed.getInt("pools.decode[1].outstanding"), "its legs all ended");

        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertEquals(0, prefill().stat("kv_blocks_pinned_now"));
            assertEquals(0, decode().stat("kv_blocks_pinned_now"));
            assertEquals(0, secondDecode.stat("kv_blocks_pinned_now"));
        });

        // the pool is put back as it was: d-0 (the same engine under the same name) comes back, d-1 goes
        admin().contentType("application/json").body(body("d-0", decode().baseUrl()))
                .post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(201);
        admin().delete("/admin/routes/vllm/pools/decode/endpoints/d-1").then().statusCode(200);
        assertEquals(List.of("d-0", "d-1"), endpoints().getList("pools.decode.name"));
    }

    @Test
    void aRetiredEndpointIsKeptWhileLegsRunAndWhileWhatIsOwedOnItCanBeDueThenLetGoAndItsNameMayJoinAgain() {
        Route route = routes.named("vllm").orElseThrow();
        Duration keep = routes.retiredEndpointKeep(route);
        assertEquals(Duration.ofMinutes(15), keep, "the default, longer than vLLM's hold and the reaper's schedule");
        assertTrue(keep.compareTo(route.capabilities().engineHold()) > 0);
        admin().contentType("application/json").body(body("d-7", secondDecode.baseUrl()))
                .post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(201);
        long seen = secondDecode.stat("requests_total");
        List<GenerateCall> running = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            running.add(GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 40));
        }
        running.forEach(GenerateCall::awaitFirstToken);
        assertTrue(secondDecode.stat("requests_total") > seen, "legs run on d-7");

        Instant retiredAt = clock.instant();
        JsonPath retired = admin().delete("/admin/routes/vllm/pools/decode/endpoints/d-7").then().statusCode(200)
                .extract().jsonPath();
        assertTrue(retired.getInt("outstanding") > 0, retired.prettify());
        assertEquals(retiredAt.toString(), retired.getString("retired_at"));
        assertNull(retired.getString("prunable_at"), "not while legs run on it");
        assertTrue(registry.find("handoff.endpoint.breaker.state").tags("route", "vllm", "endpoint", "d-7").gauges()
                .size() == 3, "a retired endpoint still shows its breaker, one series per state");

        // however long its legs run, it is kept
        ((MutableClock) clock).advance(keep.multipliedBy(2));
        routes.letGo();
        assertEquals("retired", decodeField("d-7", "state"));
        running.forEach(call -> assertEquals(Status.Code.OK, call.awaitEnd().getCode()));
        awaitNoLegOn("d-7");

        // its legs ended: kept for the keep from the first look that saw none running (late, never early)
        Instant quiet = clock.instant();
        routes.letGo();
        Instant prunableAt = Instant.parse(decodeField("d-7", "prunable_at"));
        assertEquals(quiet.plus(keep), prunableAt);
        assertEquals(retiredAt.toString(), decodeField("d-7", "retired_at"));
        ((MutableClock) clock).set(prunableAt.minusMillis(1));
        routes.letGo();
        assertEquals("retired", decodeField("d-7", "state"), "never early");

        // until then, KV owed on it is discharged there, and its name keeps meaning its engine
        OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = GrpcTestClient.withKey(
                OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        String owedBefore = heldOn(kv, "d-7");
        release(kv, owedBefore);
        assertEquals(CleanupObligation.Status.ENGINE_HELD, obligationOf(owedBefore).status(),
                "discharged through its retired endpoint (vLLM holds parked KV until its own timer)");
        admin().contentType("application/json").body(body("d-7", decode().baseUrl()))
                .post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(409);

        double prunedBefore = pruned();
        ((MutableClock) clock).set(prunableAt);
        routes.letGo();
        assertNull(decodeField("d-7", "state"), "let go: no longer listed");
        assertTrue(pruned() >= prunedBefore + 1, "counted");
        assertTrue(routes.forCleanup("vllm", "d-7").isEmpty());
        assertFalse(registry.find("handoff.endpoint.up").tags("route", "vllm", "endpoint", "d-7").gauges()
                .iterator().hasNext(), "its gauges go with it");
        assertTrue(registry.find("handoff.endpoint.breaker.state").tags("route", "vllm", "endpoint", "d-7").gauges()
                .isEmpty(), "its breaker's gauges go with it");
        // an obligation naming it now (one this bound does not cover) is retried, then left to the engine's timer
        String owedAfter = heldOn(kv, "d-7");
        release(kv, owedAfter);
        CleanupObligation late = obligationOf(owedAfter);
        assertEquals(CleanupObligation.Status.PENDING, late.status());
        assertTrue(late.lastError().contains("no endpoint named 'd-7'"), late.lastError());

        // the name joins again, even at another address, and takes legs
        admin().contentType("application/json").body(body("d-7", decode().baseUrl()))
                .post("/admin/routes/vllm/pools/decode/endpoints").then().statusCode(201);
        assertEquals("active", decodeField("d-7", "state"));
        assertEquals("0", decodeField("d-7", "outstanding"));
        for (int i = 0; i < 4; i++) {
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                    .awaitEnd().getCode());
        }

        // and goes again, leaving the pool as it was
        awaitNoLegOn("d-7");
        admin().delete("/admin/routes/vllm/pools/decode/endpoints/d-7").then().statusCode(200);
        ((MutableClock) clock).advance(keep);
        routes.letGo();
        assertNull(decodeField("d-7", "state"));
    }

    private void awaitNoLegOn(String endpoint) {
        await().atMost(Duration.ofSeconds(15)).until(() -> "0".equals(decodeField(endpoint, "outstanding")));
    }

    private String decodeField(String endpoint, String field) {
        return endpoints().param("n", endpoint).getString("pools.decode.find { it.name == n }." + field);
    }

    private double pruned() {
        Counter c = registry.find("handoff.pool.endpoints.pruned").tags("route", "vllm", "pool", "decode").counter();
        return c == null ? 0 : c.count();
    }

    /** A caller-allocated session of route vllm with KV recorded as held on {@code endpoint}, as a leg records it. */
    private String heldOn(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv, String endpoint) {
        String unique = UUID.randomUUID().toString();
        String id = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm").setIdempotencyKey("k-" + unique).build()).getRef().getSessionId();
        sessions.recordObligation("team-a", id, CleanupObligation.pending("decode@" + endpoint, "vllm", endpoint,
                "parked-prefill-kv", Map.of(), clock.instant().plus(Duration.ofSeconds(480)), false))
                .await().indefinitely();
        return id;
    }

    private void release(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv, String sessionId) {
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(sessionId).build());
        reaper.sweep().await().atMost(Duration.ofSeconds(30));
    }

    private CleanupObligation obligationOf(String sessionId) {
        return store.find(sessionId).await().atMost(Duration.ofSeconds(10)).orElseThrow().obligations().get(0);
    }

    @Test
    void aPoolWhoseEndpointsAreAllRetiredRefusesAsUnavailableUntilOneIsAdded() {
        admin().delete("/admin/routes/vllm/pools/prefill/endpoints/p-0").then().statusCode(200);
        try {
            GenerateCall refused = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
            assertEquals(Status.Code.UNAVAILABLE, refused.awaitEnd().getCode());
            assertFalse(refused.awaitEnd().getDescription().contains("127.0.0.1"));
        } finally {
            admin().contentType("application/json").body(body("p-0", prefill().baseUrl()))
                    .post("/admin/routes/vllm/pools/prefill/endpoints").then().statusCode(201);
        }
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4)
                .awaitEnd().getCode());
    }
}
