package io.handoff.gateway.control;

import com.google.protobuf.Struct;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.AllRequests;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Control.Abort of each target kind, with the upstream statuses, over real gRPC, Redis and simulated engines. */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class AbortTest extends ControlPlaneTest {

    @Inject
    SessionStore store;

    @Inject
    SessionService sessions;

    private ControlGrpc.ControlBlockingStub teamA;
    private ControlGrpc.ControlBlockingStub teamB;
    private ControlGrpc.ControlBlockingStub admin;

    @BeforeEach
    void stubs() {
        teamA = control;
        teamB = control(ControlPlaneProfile.TEAM_B_KEY);
        admin = control(ControlPlaneProfile.ADMIN_KEY);
    }

    private GenerateCall longGenerate(String key, String model) {
        return GenerateCall.start(client, key, model, 250).awaitFirstToken();
    }

    private Session sessionOf(String tenant, GenerateCall call) {
        return store.findByIdempotencyKey(tenant, SessionService.GENERATE_KEY_PREFIX + call.requestId())
                .await().indefinitely().orElseThrow();
    }

    private static AbortRequest byRequest(String requestId) {
        return AbortRequest.newBuilder().setRequestId(requestId).build();
    }

    private static AbortRequest bySession(String sessionId) {
        return AbortRequest.newBuilder().setKvSession(KvSessionRef.newBuilder().setSessionId(sessionId)).build();
    }

    private static final AbortRequest ALL = AbortRequest.newBuilder().setAllRequests(AllRequests.getDefaultInstance())
            .build();

    private static void refused(Status.Code code, Supplier<?> call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::get);
        assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
    }

    private static void endsCancelled(GenerateCall call) {
        assertEquals(Status.Code.OK, call.awaitEnd().getCode());
        assertEquals(FinishReason.FINISH_REASON_CANCELLED, call.finishReason(), call.events().toString());
    }

    @Test
    void abortByRequestId() {
        GenerateCall call = longGenerate(ControlPlaneProfile.TEAM_A_KEY, "m-vllm");
        refused(Status.Code.NOT_FOUND, () -> teamB.abort(byRequest(call.requestId())));
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, teamA.abort(byRequest(call.requestId())).getStatus());
        endsCancelled(call);
        await().atMost(Duration.ofSeconds(10)).until(() -> sessionOf("team-a", call).state() == SessionState.CANCELLED);
        // once finished, aborting again is a success that changes nothing
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, teamA.abort(byRequest(call.requestId())).getStatus());
        refused(Status.Code.NOT_FOUND, () -> teamA.abort(byRequest("never-sent-" + UUID.randomUUID())));
    }

    @Test
    void abortByRequestIdReachesARequestWhoseSessionLivesElsewhere() {
        // a Generate's session as another replica allocates it: its request id is the reserved idempotency key
        String requestId = "elsewhere-" + UUID.randomUUID();
        Session session = sessions.allocateForGenerate("team-a", new AllocateCommand(requestId, "m-vllm", requestId,
                Optional.of(ScheduleStyle.CONTEXT_FIRST), Optional.of(TransferDisposition.REQUIRED),
                Optional.empty(), Struct.getDefaultInstance(), "vllm"), "").await().indefinitely().session();
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, teamA.abort(byRequest(requestId)).getStatus());
        assertEquals(SessionState.CANCELLED, store.find(session.id()).await().indefinitely().orElseThrow().state());
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, teamA.abort(byRequest(requestId)).getStatus());
    }

    @Test
    void abortByKvSession() {
        GenerateCall call = longGenerate(ControlPlaneProfile.TEAM_A_KEY, "m-sglang");
        Session session = sessionOf("team-a", call);
        refused(Status.Code.NOT_FOUND, () -> teamB.abort(bySession(session.id())));
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, teamA.abort(bySession(session.id())).getStatus());
        endsCancelled(call);
        assertEquals(SessionState.CANCELLED, store.find(session.id()).await().indefinitely().orElseThrow().state());
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, teamA.abort(bySession(session.id())).getStatus());
        refused(Status.Code.NOT_FOUND, () -> teamA.abort(bySession("ffffffffffffffffffffffffffffffff")));
        refused(Status.Code.NOT_FOUND, () -> teamA.abort(bySession("not-a-session-id")));
    }

    @Test
    void abortByKvSessionEndsACallerAllocatedSession() {
        var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                ControlPlaneProfile.TEAM_A_KEY);
        String unique = UUID.randomUUID().toString();
        KvSession s = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                .setModel("m-trtllm").setIdempotencyKey("k-" + unique).build());
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, teamA.abort(bySession(s.getRef().getSessionId())).getStatus());
        assertEquals(KvSessionState.KV_SESSION_STATE_CANCELLED, kv.getKvSession(GetKvSessionRequest.newBuilder()
                .setSessionId(s.getRef().getSessionId()).build()).getState());
    }

    @Test
    void abortAllRequestsOfTheCallersTenantOrOfEveryTenantForAnAdmin() {
        GenerateCall a1 = longGenerate(ControlPlaneProfile.TEAM_A_KEY, "m-vllm");
        GenerateCall a2 = longGenerate(ControlPlaneProfile.TEAM_A_KEY, "m-trtllm");
        GenerateCall b1 = longGenerate(ControlPlaneProfile.TEAM_B_KEY, "m-vllm");
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, teamA.abort(ALL).getStatus());
        endsCancelled(a1);
        endsCancelled(a2);
        assertFalse(b1.isDone(), "another tenant's request goes on");
        assertEquals(AbortStatus.ABORT_STATUS_ALREADY_FINISHED, teamA.abort(ALL).getStatus());
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, admin.abort(ALL).getStatus());
        endsCancelled(b1);
    }

    @Test
    void anAbortWithoutTargetIsInvalid() {
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.abort(AbortRequest.getDefaultInstance()));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.abort(byRequest("")));
    }
}
