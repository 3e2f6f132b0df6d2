package io.handoff.gateway.control;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.orchestration.LiveRequests;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthState;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A drain from start to completion, with sessions in every live state and one whose KV an engine still holds:
 * new work is refused, what runs finishes, what idles expires, and the drain completes when nothing remains.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class DrainTest extends ControlPlaneTest {

    @Inject
    SessionStore store;

    @Inject
    SessionService sessions;

    @Inject
    Reaper reaper;

    @Inject
    MutableClock clock;

    @Inject
    LiveRequests live;

    private OpenEngineKvGrpc.OpenEngineKvBlockingStub kv;

    @BeforeEach
    void stubs() {
        kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
    }

    @AfterEach
    void stopDrain() {
        admin().delete("/admin/drain");
    }

    private RequestSpecification http() {
        return RestAssured.given().baseUri(base.toString());
    }

    private RequestSpecification admin() {
        return http().header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY);
    }

    private JsonPath progress() {
        return admin().get("/admin/drain").then().statusCode(200).extract().jsonPath();
    }

    /** A completed Generate's session ends after its client's stream; until it has, the run counts here. */
    private void awaitEndsWritten() {
        await("the completed runs' sessions have ended").atMost(Duration.ofSeconds(30))
                .until(() -> live.size() == 0);
    }

    private KvSession allocate() {
        String unique = UUID.randomUUID().toString();
        return kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm").setIdempotencyKey("k-" + unique).build());
    }

    private static String errorCode(StatusRuntimeException e) {
        return e.getTrailers().get(Metadata.Key.of("handoff-error-code", Metadata.ASCII_STRING_MARSHALLER));
    }

    @Test
    void onlyAnAdminKeyDrains() {
        http().post("/admin/drain").then().statusCode(401);
        http().header("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY).post("/admin/drain").then()
                .statusCode(403);
        http().header("x-api-key", "not-a-key").get("/admin/drain").then().statusCode(403);
        assertFalse(progress().getBoolean("draining"));
    }

    /**
     * A handoff whose decode read the parked KV leaves nothing held (vLLM and TensorRT-LLM free a parked prefill when
     * the consumer pulls it), so a drain after completed requests is complete at once, not after the engines' timers.
     */
    @Test
    void completedHandoffsLeaveNothingForADrainToWaitFor() {
        clearLeftovers();
        for (String model : List.of("m-vllm", "m-trtllm", "m-sglang")) {
            for (int i = 0; i < 3; i++) {
                assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, model, 4)
                        .awaitEnd().getCode(), model);
            }
        }
        awaitEndsWritten();
        assertEquals(0L, store.countEngineHeld(clock.instant()).await().indefinitely());
        JsonPath started = admin().post("/admin/drain").then().statusCode(200).extract().jsonPath();
        assertEquals(0, started.getLong("engine_held"), started.prettify());
        assertEquals(0, started.getLong("live"), started.prettify());
        assertTrue(started.getBoolean("complete"), started.prettify());
    }

    /** Sessions and holds other tests of this profile left: their leases and holds run out, the reaper ends them. */
    private void clearLeftovers() {
        clock.advance(Duration.ofHours(2));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            reaper.sweep().await().indefinitely();
            return store.countEngineHeld(clock.instant()).await().indefinitely() == 0
                    && store.countByState().await().indefinitely().entrySet().stream()
                            .noneMatch(e -> !e.getKey().isTerminal() && e.getValue() > 0);
        });
    }

    @Test
    void drainFromStartToCompletion() {
        // one session in each live state, and one ended whose KV the engine still holds
        KvSession allocated = allocate();
        KvSession ready = allocate();
        sessions.transition("team-a", ready.getRef().getSessionId(), SessionState.READY, "the producer filled it",
                OptionalLong.empty()).await().indefinitely();
        KvSession held = allocate();
        sessions.recordObligation("team-a", held.getRef().getSessionId(), CleanupObligation.pending("prefill@p-0",
                "vllm", "p-0", "parked-prefill-kv", Map.of(), clock.instant().plus(Duration.ofSeconds(480)), true))
                .await().indefinitely();
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(held.getRef().getSessionId()).build());
        GenerateCall attached = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 250)
                .awaitFirstToken();
        Session decoding = store.findByIdempotencyKey("team-a", SessionService.GENERATE_KEY_PREFIX
                + attached.requestId()).await().indefinitely().orElseThrow();
        assertEquals(SessionState.ATTACHED, decoding.state());

        JsonPath started = admin().post("/admin/drain").then().statusCode(200).extract().jsonPath();
        assertTrue(started.getBoolean("draining"));
        assertFalse(started.getBoolean("complete"));
        assertTrue(started.getLong("allocated") >= 1, started.prettify());
        assertTrue(started.getLong("sessions_by_state.READY") >= 1, started.prettify());
        assertTrue(started.getLong("sessions_by_state.ATTACHED") >= 1, started.prettify());
        assertTrue(started.getLong("live") >= 3, started.prettify());
        assertTrue(started.getLong("engine_held") >= 1, started.prettify());
        assertTrue(started.getInt("running_here") >= 1, started.prettify());

        // the whole says DRAINING, new work is refused as DRAINING; readiness stays up, since the sessions that
        // remain are still renewed and released through this deployment
        assertEquals(HealthState.HEALTH_STATE_DRAINING, control.health(HealthRequest.getDefaultInstance()).getState());
        http().get("/q/health/ready").then().statusCode(200);
        GenerateCall refused = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 2);
        assertEquals(Status.Code.UNAVAILABLE, refused.awaitEnd().getCode());
        assertEquals("ERROR_CODE_DRAINING", refused.errorCode());
        StatusRuntimeException allocation = assertThrows(StatusRuntimeException.class, this::allocate);
        assertEquals(Status.Code.UNAVAILABLE, allocation.getStatus().getCode());
        assertEquals("ERROR_CODE_DRAINING", errorCode(allocation));

        // sessions already there go on: renewed, released, decoded to the end
        kv.renewKvSession(RenewKvSessionRequest.newBuilder().setSessionId(allocated.getRef().getSessionId()).build());
        assertEquals(KvSessionState.KV_SESSION_STATE_RELEASED, kv.releaseKvSession(ReleaseKvSessionRequest
                .newBuilder().setSessionId(ready.getRef().getSessionId()).build()).getSession().getState());
        assertEquals(Status.Code.OK, attached.awaitEnd().getCode());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, attached.finishReason());
        awaitEndsWritten();
        JsonPath running = progress();
        assertTrue(running.getBoolean("draining"));
        assertFalse(running.getBoolean("complete"), "an allocated session is still live, and held KV remains");
        assertEquals(0, running.getInt("running_here"));

        // the idle session's lease runs out and the engines' holds end: nothing remains, the drain is complete
        clock.advance(Duration.ofHours(2));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            reaper.sweep().await().indefinitely();
            return progress().getBoolean("complete");
        });
        JsonPath complete = progress();
        assertEquals(0, complete.getLong("live"));
        assertEquals(0, complete.getLong("engine_held"));
        assertEquals(SessionState.EXPIRED, store.find(allocated.getRef().getSessionId()).await().indefinitely()
                .map(Session::state).orElse(SessionState.EXPIRED));
        assertEquals(HealthState.HEALTH_STATE_DRAINING, control.health(HealthRequest.getDefaultInstance()).getState());

        // stopping the drain takes new work again
        assertFalse(admin().delete("/admin/drain").then().statusCode(200).extract().jsonPath()
                .getBoolean("draining"));
        http().get("/q/health/ready").then().statusCode(200);
        assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 2)
                .awaitEnd().getCode());
    }
}
