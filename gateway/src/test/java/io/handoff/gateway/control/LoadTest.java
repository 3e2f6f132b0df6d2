package io.handoff.gateway.control;

import com.google.protobuf.Struct;
import io.grpc.Status;
import io.handoff.gateway.orchestration.LiveRequests;
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
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Control.GetLoad: live sessions and sessions whose KV an engine still holds (both in active_kv_sessions), and the
 * engines' native figures, from a cache the sampler fills and the clock ages.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class LoadTest extends ControlPlaneTest {

    @Inject
    FleetSampler sampler;

    @Inject
    SessionStore store;

    @Inject
    MutableClock clock;

    @Inject
    LiveRequests live;

    @Inject
    SessionService sessions;

    /** GetLoad after a sample whose store part answered (a failed one keeps the previous counts, by design). */
    private LoadInfo sampledLoad() {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            sampler.sampleNow().await().indefinitely();
            return sampler.sessions().map(counts -> counts.error() == null).orElse(false);
        });
        return control.getLoad(GetLoadRequest.getDefaultInstance());
    }

    private static Struct sessions(LoadInfo load) {
        return load.getAttributes().getFieldsOrThrow("sessions").getStructValue();
    }

    private static long figure(LoadInfo load, String name) {
        return (long) sessions(load).getFieldsOrThrow(name).getNumberValue();
    }

    private static void assertActiveCountsBoth(LoadInfo load) {
        assertEquals(figure(load, "live") + figure(load, "engine_held"), load.getActiveKvSessions(), load.toString());
    }

    /** The decode read the parked KV, which frees it on a vLLM producer: nothing is counted as held afterwards. */
    @Test
    void aCompletedHandoffIsNotCountedAsHeld() {
        long heldBefore = figure(sampledLoad(), "engine_held");
        GenerateCall call = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
        assertEquals(Status.Code.OK, call.awaitEnd().getCode());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, call.finishReason(), call.events().toString());
        Session ended = await().atMost(Duration.ofSeconds(10)).until(() -> store.findByIdempotencyKey("team-a",
                SessionService.GENERATE_KEY_PREFIX + call.requestId()).await().indefinitely()
                .filter(Session::isTerminal).orElse(null), s -> s != null);
        assertEquals(SessionState.COMPLETE, ended.state());
        assertEquals(1, ended.obligations().size(), ended.toString());
        assertEquals(CleanupObligation.Status.DISCHARGED, ended.obligations().get(0).status());
        assertFalse(ended.engineMayHoldKv(clock.instant()), ended.obligations().toString());

        LoadInfo after = sampledLoad();
        assertEquals(heldBefore, figure(after, "engine_held"), after.toString());
        assertActiveCountsBoth(after);
    }

    @Test
    void aReleasedSessionWhoseEngineHoldsItsKvStaysCounted() {
        var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                ControlPlaneProfile.TEAM_A_KEY);
        String unique = UUID.randomUUID().toString();
        KvSession s = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm").setIdempotencyKey("k-" + unique).build());
        String id = s.getRef().getSessionId();
        // a framework's prefill parked KV on a vLLM producer for this session
        sessions.recordObligation("team-a", id, CleanupObligation.pending("prefill@p-0", "vllm", "p-0",
                "parked-prefill-kv", Map.of(), clock.instant().plus(Duration.ofSeconds(480)), false)).await().indefinitely();
        LoadInfo before = sampledLoad();
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(id).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> store.find(id).await().indefinitely().orElseThrow()
                .pendingObligations().isEmpty());
        LoadInfo after = sampledLoad();
        assertEquals(figure(before, "live") - 1, figure(after, "live"), after.toString());
        assertEquals(figure(before, "engine_held") + 1, figure(after, "engine_held"), after.toString());
        assertEquals(before.getActiveKvSessions(), after.getActiveKvSessions(), "released, but still taking KV");
        assertActiveCountsBoth(after);
    }

    @Test
    void liveSessionsAreCountedUntilReleased() {
        var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                ControlPlaneProfile.TEAM_A_KEY);
        // a Generate of an earlier test ends its session after its client's stream: that end must not land in between
        await().atMost(Duration.ofSeconds(30)).until(() -> live.size() == 0);
        long liveBefore = figure(sampledLoad(), "live");
        String unique = UUID.randomUUID().toString();
        KvSession s = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-vllm").setIdempotencyKey("k-" + unique).build());
        LoadInfo allocated = sampledLoad();
        assertEquals(liveBefore + 1, figure(allocated, "live"));
        assertActiveCountsBoth(allocated);
        kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId()).build());
        assertEquals(liveBefore, figure(sampledLoad(), "live"));
    }

    @Test
    void engineFiguresComeFromTheCacheWithTheirAge() {
        GenerateCall running = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-sglang", 200)
                .awaitFirstToken();
        try {
            LoadInfo load = sampledLoad();
            assertTrue(load.getRunningRequests() >= 1, load.toString());
            Struct decode = load.getAttributes().getFieldsOrThrow("routes").getStructValue()
                    .getFieldsOrThrow("sglang").getStructValue().getFieldsOrThrow("decode").getStructValue()
                    .getFieldsOrThrow("d-0").getStructValue();
            Struct figures = decode.getFieldsOrThrow("load").getStructValue();
            assertTrue(figures.getFieldsOrThrow("running_requests").getNumberValue() >= 1, decode.toString());
            assertTrue(decode.getFieldsOrThrow("takes_traffic").getBoolValue());
            assertFalse(load.getAttributes().getFieldsOrThrow("stale").getBoolValue());
        } finally {
            running.awaitEnd();
        }
        // no sample in between: the same figures, older, and stale once past handoff.discovery.stale-after
        clock.advance(Duration.ofSeconds(31));
        LoadInfo aged = control.getLoad(GetLoadRequest.getDefaultInstance());
        assertTrue(aged.getAttributes().getFieldsOrThrow("sample_age_ms").getNumberValue() >= 31_000);
        assertTrue(aged.getAttributes().getFieldsOrThrow("stale").getBoolValue());
        assertTrue(sampledLoad().getAttributes().getFieldsOrThrow("sample_age_ms").getNumberValue() < 31_000);
    }
}
