package io.handoff.gateway.api.view;

import io.grpc.Status;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The live view's JSON document and its gate, on the control-plane profile (auth on, a tenant and an admin key):
 * only an admin key reads it, and what it says is what the gateway did: the routes with each endpoint's sampled
 * health and breaker, a Generate that ended, a live session counting down, an ended one whose KV an engine holds,
 * the sessions by state as the store counts them, and a drain from its start to its completion.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class LiveViewStateTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    SessionService sessions;

    @Inject
    SessionStore store;

    @Inject
    FleetSampler sampler;

    @Inject
    MutableClock clock;

    @Inject
    Reaper reaper;

    private GrpcTestClient client;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    /** A drain is the deployment's, kept in the store: every test leaves none, as DrainTest does. */
    @AfterEach
    void stopAnyDrain() {
        admin().delete("/admin/drain").then().statusCode(200);
    }

    private RequestSpecification admin() {
        return http().header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY);
    }

    private RequestSpecification http() {
        return RestAssured.given().baseUri(base.toString()).redirects().follow(false);
    }

    private JsonPath state() {
        return http().header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY).get(LiveViewRoutes.STATE)
                .then().statusCode(200).header("content-type", containsString("application/json"))
                .extract().jsonPath();
    }

    @Test
    void onlyAnAdminKeyReadsTheStateWhileAuthIsOn() {
        http().get(LiveViewRoutes.STATE).then().statusCode(401).body("error", containsString("admin key"));
        http().header("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY).get(LiveViewRoutes.STATE).then()
                .statusCode(403);
        http().header("x-api-key", "not-a-key").get(LiveViewRoutes.STATE).then().statusCode(403);
        http().header("x-api-key", ControlPlaneProfile.ADMIN_KEY).get(LiveViewRoutes.STATE).then().statusCode(200);
        // the page itself holds no data: it asks for the key and sends it with each fetch
        http().get("/handoff").then().statusCode(302).header("location", "/handoff/");
        http().get("/handoff/").then().statusCode(200).body(containsString("view.js"));
        http().get("/handoff/view.js").then().statusCode(200).body(containsString(LiveViewRoutes.STATE));
    }

    @Test
    void theStateSaysWhatTheGatewayDid() {
        // The view shows the 20 soonest leases and releases. Earlier tests on this application leave sessions and
        // holds that would come first (hundreds of them, depending on which ran before): a day later every one of
        // them has ended, and the sessions made here are the soonest.
        clock.advance(Duration.ofDays(1));
        sampler.sampleNow().await().atMost(Duration.ofSeconds(30));
        GenerateCall call = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
        assertEquals(Status.Code.OK, call.awaitEnd().getCode());
        OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = GrpcTestClient.withKey(
                OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        KvSession live = allocate(kv);
        KvSession held = allocate(kv);
        Instant holdEnds = clock.instant().plus(Duration.ofSeconds(480));
        sessions.recordObligation("team-a", held.getRef().getSessionId(), CleanupObligation.pending("prefill@p-0",
                "vllm", "p-0", "parked-prefill-kv", Map.of(), holdEnds, true)).await().indefinitely();
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(held.getRef().getSessionId()).build());

        // the handoff is listed once its session's end is written, after its client's stream
        JsonPath state = await().atMost(Duration.ofSeconds(30)).until(this::state, s -> s.getMap(
                "handoffs.find { it.request_id == '" + call.requestId() + "' }") != null);

        assertEquals(clock.instant().toString(), state.getString("now"));
        assertFalse(state.getString("replica").isEmpty());
        assertEquals("vllm", state.getString("routes.find { it.name == 'vllm' }.family"));
        assertEquals("m-vllm", state.getString("routes.find { it.name == 'vllm' }.model"));
        assertEquals(List.of("prefill", "decode"), state.getList("routes.find { it.name == 'vllm' }.pools.role"));
        Map<String, Object> decode = state.getMap("routes.find { it.name == 'vllm' }.pools[1].endpoints[0]");
        assertEquals("d-0", decode.get("name"));
        assertEquals("healthy", decode.get("health"));
        assertEquals("CLOSED", decode.get("breaker"));
        Map<String, Object> wrongRole = state.getMap("routes.find { it.name == 'wrong-role' }.pools[0].endpoints[0]");
        assertEquals("unhealthy", wrongRole.get("health"), "an SGLang decode engine in a prefill pool");
        assertEquals("OPEN", wrongRole.get("breaker"));

        Map<String, Object> handoff = state.getMap("handoffs.find { it.request_id == '" + call.requestId() + "' }");
        assertNotNull(handoff, state.prettify());
        assertEquals("vllm", handoff.get("route"));
        assertEquals("context-first", handoff.get("style"));
        assertEquals("p-0", handoff.get("prefill"));
        assertEquals("d-0", handoff.get("decode"));
        assertEquals("COMPLETE", handoff.get("state"));
        assertTrue(((Number) handoff.get("duration_ms")).doubleValue() > 0, handoff.toString());
        assertTrue(String.valueOf(handoff.get("trace_id")).matches("[0-9a-f]{32}"), handoff.toString());
        assertEquals(SessionState.COMPLETE, store.find((String) handoff.get("session_id")).await().indefinitely()
                .orElseThrow().state());

        String liveId = live.getRef().getSessionId();
        Map<String, Object> lease = state.getMap("leases.find { it.session_id == '" + liveId + "' }");
        assertNotNull(lease, state.prettify());
        assertEquals("team-a", lease.get("tenant"));
        assertEquals("m-vllm", lease.get("model"));
        assertEquals("ALLOCATED", lease.get("state"));
        assertEquals(Instant.ofEpochSecond(live.getLeaseExpiresAt().getSeconds(), live.getLeaseExpiresAt().getNanos())
                .toString(), lease.get("lease_expires_at"));
        assertEquals(Duration.between(clock.instant(), Instant.parse((String) lease.get("lease_expires_at")))
                .toMillis(), ((Number) lease.get("lease_ms_left")).longValue());
        assertTrue(state.getList("leases.session_id").size() <= LiveViewState.SESSIONS_SHOWN);

        String heldId = held.getRef().getSessionId();
        Map<String, Object> kvHeld = state.getMap("engine_held.find { it.session_id == '" + heldId + "' }");
        assertNotNull(kvHeld, state.prettify());
        assertEquals("RELEASED", kvHeld.get("state"));
        assertEquals("p-0", state.getString("engine_held.find { it.session_id == '" + heldId
                + "' }.holds[0].endpoint"));
        assertEquals("parked-prefill-kv", state.getString("engine_held.find { it.session_id == '" + heldId
                + "' }.holds[0].resource"));

        Map<SessionState, Long> counted = store.countByState().await().indefinitely();
        for (SessionState s : SessionState.values()) {
            assertEquals(counted.get(s).longValue(), state.getLong("drain.sessions_by_state." + s.name()), s.name());
        }
        assertFalse(state.getBoolean("drain.draining"));
        assertTrue(state.getLong("drain.engine_held") >= 1);
    }

    /**
     * A drain as the view shows it: started while a stream runs and a session is live, it is in progress (since when,
     * what remains); the stream ends and the session is released, the view follows, and once nothing remains the
     * drain shows complete; stopped, the view says so.
     */
    @Test
    void theStateShowsADrainInProgressUntilItIsCompleteAndStopped() {
        endLeftovers();
        GenerateCall running = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 250)
                .awaitFirstToken();
        OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = GrpcTestClient.withKey(
                OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        KvSession live = allocate(kv);
        assertFalse(state().getBoolean("drain.draining"));

        JsonPath started = admin().post("/admin/drain").then().statusCode(200).extract().jsonPath();

        JsonPath draining = state();
        assertTrue(draining.getBoolean("drain.draining"), draining.prettify());
        assertFalse(draining.getBoolean("drain.complete"));
        assertEquals(started.getString("since"), draining.getString("drain.since"));
        assertEquals(clock.instant().toEpochMilli(), Instant.parse(draining.getString("drain.since")).toEpochMilli(),
                "since the drain started, on the gateway's clock");
        assertEquals(1, draining.getInt("drain.running_here"), "the stream still runs here");
        assertEquals(2, draining.getLong("drain.live"), "the stream's session and the allocated one");
        assertEquals(1, draining.getLong("drain.allocated"));
        assertEquals(1, draining.getLong("drain.sessions_by_state.ATTACHED"));
        assertEquals(0, draining.getLong("drain.engine_held"));

        // what runs goes on: the stream ends, and the view counts it out; the allocated session still holds the drain
        assertEquals(Status.Code.OK, running.awaitEnd().getCode());
        await().atMost(Duration.ofSeconds(10)).until(() -> state().getInt("drain.running_here") == 0);
        JsonPath streamEnded = state();
        assertTrue(streamEnded.getBoolean("drain.draining"));
        assertFalse(streamEnded.getBoolean("drain.complete"), streamEnded.prettify());
        assertEquals(1, streamEnded.getLong("drain.live"), streamEnded.prettify());

        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(live.getRef().getSessionId()).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> state().getBoolean("drain.complete"));
        JsonPath complete = state();
        assertTrue(complete.getBoolean("drain.draining"), "a complete drain keeps its mark until it is stopped");
        assertEquals(0, complete.getLong("drain.live"));
        assertEquals(0, complete.getLong("drain.engine_held"));
        assertEquals(0, complete.getInt("drain.running_here"));

        admin().delete("/admin/drain").then().statusCode(200);
        JsonPath stopped = state();
        assertFalse(stopped.getBoolean("drain.draining"));
        assertFalse(stopped.getBoolean("drain.complete"));
        assertNull(stopped.getString("drain.since"));
    }

    /** Sessions and holds other tests of this profile left: their leases and holds run out, the reaper ends them. */
    private void endLeftovers() {
        clock.advance(Duration.ofHours(2));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            reaper.sweep().await().indefinitely();
            return store.countEngineHeld(clock.instant()).await().indefinitely() == 0
                    && store.countByState().await().indefinitely().entrySet().stream()
                            .noneMatch(e -> e.getKey().isLive() && e.getValue() > 0);
        });
    }

    private static KvSession allocate(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv) {
        String unique = UUID.randomUUID().toString();
        return kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm").setIdempotencyKey("k-" + unique).build());
    }
}
