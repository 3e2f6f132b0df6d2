package io.handoff.gateway.api;

import com.google.protobuf.Duration;
import grpc.reflection.v1alpha.Reflection;
import grpc.reflection.v1alpha.ServerReflectionGrpc;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RedisTenancyProfile;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvConnectorInfo;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.openengine.v1.ListLorasRequest;
import io.handoff.openengine.v1.OpenEngineKvGrpc.OpenEngineKvBlockingStub;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.handoff.openengine.v1.ServerInfo;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** OpenEngineKv over real gRPC on loopback, sessions in a real Redis, tenants from API keys. */
@QuarkusTest
@TestProfile(RedisTenancyProfile.class)
class OpenEngineKvGrpcTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    MutableClock clock;

    @Inject
    Reaper reaper;

    @Inject
    SessionStore store;

    private GrpcTestClient client;
    private OpenEngineKvBlockingStub teamA;
    private OpenEngineKvBlockingStub teamB;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
        teamA = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                RedisTenancyProfile.TEAM_A_KEY);
        teamB = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                RedisTenancyProfile.TEAM_B_KEY);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    private static AllocateKvSessionRequest.Builder allocation() {
        String unique = UUID.randomUUID().toString();
        return AllocateKvSessionRequest.newBuilder().setRequestId("req-" + unique).setModel("llama")
                .setIdempotencyKey("key-" + unique);
    }

    private static StatusRuntimeException refused(Status.Code code, Supplier<?> call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::get);
        assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
        return e;
    }

    private static String errorCode(StatusRuntimeException e) {
        return e.getTrailers().get(Metadata.Key.of("handoff-error-code", Metadata.ASCII_STRING_MARSHALLER));
    }

    private long storedSessions() {
        return store.countByState().await().indefinitely().values().stream().mapToLong(Long::longValue).sum();
    }

    @Test
    void callsWithoutAValidKeyAreUnauthenticated() {
        OpenEngineKvBlockingStub anonymous = OpenEngineKvGrpc.newBlockingStub(client.channel());
        refused(Status.Code.UNAUTHENTICATED, () -> anonymous.allocateKvSession(allocation().build()));
        OpenEngineKvBlockingStub wrong = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                "not-a-key");
        refused(Status.Code.UNAUTHENTICATED, () -> wrong.allocateKvSession(allocation().build()));
    }

    @Test
    void adminKeysDoNotOwnSessions() {
        OpenEngineKvBlockingStub admin = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                RedisTenancyProfile.ADMIN_KEY);
        refused(Status.Code.PERMISSION_DENIED, () -> admin.allocateKvSession(allocation().build()));
    }

    @Test
    void allocateAnswersTheResolvedSessionAndItsAbsoluteExpiry() {
        Instant now = clock.instant();
        KvSession s = teamA.allocateKvSession(allocation().build());
        assertEquals(KvSessionState.KV_SESSION_STATE_ALLOCATED, s.getState());
        assertEquals(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST, s.getScheduleStyle());
        assertEquals(KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED, s.getTransferDisposition());
        assertEquals(1, s.getEpoch());
        assertEquals(now.plusSeconds(30).getEpochSecond(), s.getLeaseExpiresAt().getSeconds());
        assertEquals(32, s.getRef().getSessionId().length());
        assertEquals(s, teamA.getKvSession(GetKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId())
                .build()));
    }

    @Test
    void badAllocationsGetTheirStatusAndWriteNothing() {
        long before = storedSessions();
        StatusRuntimeException missing = refused(Status.Code.INVALID_ARGUMENT,
                () -> teamA.allocateKvSession(allocation().clearIdempotencyKey().build()));
        assertTrue(missing.getStatus().getDescription().contains("idempotency_key"));
        assertEquals("ERROR_CODE_INVALID_ARGUMENT", errorCode(missing));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.allocateKvSession(allocation().clearModel().build()));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.allocateKvSession(allocation().clearRequestId().build()));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.allocateKvSession(allocation()
                .setLease(Duration.newBuilder().setSeconds(0)).build()));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.allocateKvSession(allocation()
                .setLease(Duration.newBuilder().setSeconds(-5)).build()));
        refused(Status.Code.OUT_OF_RANGE, () -> teamA.allocateKvSession(allocation()
                .setLease(Duration.newBuilder().setSeconds(601)).build()));
        StatusRuntimeException style = refused(Status.Code.FAILED_PRECONDITION, () -> teamA.allocateKvSession(
                allocation().setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT).build()));
        assertEquals("ERROR_CODE_UNSUPPORTED_FEATURE", errorCode(style));
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.allocateKvSession(allocation()
                .setScheduleStyleValue(99).build()));
        assertEquals(before, storedSessions());
    }

    @Test
    void idempotencyRetriesAndConflicts() {
        AllocateKvSessionRequest request = allocation().build();
        KvSession first = teamA.allocateKvSession(request);
        assertEquals(first.getRef(), teamA.allocateKvSession(request).getRef());
        refused(Status.Code.ALREADY_EXISTS, () -> teamA.allocateKvSession(request.toBuilder().setModel("other")
                .build()));
        assertTrue(teamA.releaseKvSession(release(first)).getSession().getState()
                == KvSessionState.KV_SESSION_STATE_RELEASED);
        KvSession tombstone = teamA.allocateKvSession(request);
        assertEquals(first.getRef(), tombstone.getRef());
        assertEquals(KvSessionState.KV_SESSION_STATE_RELEASED, tombstone.getState());
        KvSession otherTenant = teamB.allocateKvSession(request);
        assertFalse(otherTenant.getRef().equals(first.getRef()));
    }

    @Test
    void sixteenConcurrentIdenticalAllocationsMakeOneSession() throws Exception {
        AllocateKvSessionRequest request = allocation().build();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<CompletableFuture<KvSession>> calls = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> teamA.allocateKvSession(request), pool));
            }
            Set<String> ids = new java.util.HashSet<>();
            for (CompletableFuture<KvSession> call : calls) {
                ids.add(call.get(20, TimeUnit.SECONDS).getRef().getSessionId());
            }
            assertEquals(1, ids.size());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sessionsOfAnotherTenantAreIndistinguishableFromUnknownOnes() {
        KvSession s = teamA.allocateKvSession(allocation().build());
        refused(Status.Code.INVALID_ARGUMENT, () -> teamA.getKvSession(GetKvSessionRequest.getDefaultInstance()));
        StatusRuntimeException foreign = refused(Status.Code.NOT_FOUND, () -> teamB.getKvSession(
                GetKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId()).build()));
        StatusRuntimeException unknown = refused(Status.Code.NOT_FOUND, () -> teamB.getKvSession(
                GetKvSessionRequest.newBuilder().setSessionId("0123456789abcdef0123456789abcdef").build()));
        assertEquals(unknown.getStatus().getDescription(), foreign.getStatus().getDescription());
        assertEquals("ERROR_CODE_KV_SESSION_NOT_FOUND", errorCode(foreign));
        refused(Status.Code.NOT_FOUND, () -> teamB.renewKvSession(RenewKvSessionRequest.newBuilder()
                .setSessionId(s.getRef().getSessionId()).build()));
        refused(Status.Code.NOT_FOUND, () -> teamB.releaseKvSession(release(s)));
        assertEquals(KvSessionState.KV_SESSION_STATE_ALLOCATED, teamA.getKvSession(get(s)).getState());
    }

    @Test
    void renewReleaseAndFencing() {
        KvSession s = teamA.allocateKvSession(allocation().build());
        clock.advance(java.time.Duration.ofSeconds(10));
        KvSession renewed = teamA.renewKvSession(RenewKvSessionRequest.newBuilder()
                .setSessionId(s.getRef().getSessionId()).setLease(Duration.newBuilder().setSeconds(120))
                .setExpectedEpoch(1).build());
        assertEquals(clock.instant().plusSeconds(120).getEpochSecond(), renewed.getLeaseExpiresAt().getSeconds());
        assertEquals(1, renewed.getRenewals());
        StatusRuntimeException stale = refused(Status.Code.ABORTED, () -> teamA.renewKvSession(
                RenewKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId()).setExpectedEpoch(7)
                        .build()));
        assertTrue(stale.getStatus().getDescription().contains("stale"));

        ReleaseKvSessionResponse released = teamA.releaseKvSession(release(s));
        assertFalse(released.getAlreadyTerminal());
        assertEquals(KvSessionState.KV_SESSION_STATE_RELEASED, released.getSession().getState());
        assertEquals(2, released.getSession().getEpoch());
        assertTrue(released.getSession().hasTombstoneExpiresAt());
        ReleaseKvSessionResponse again = teamA.releaseKvSession(release(s));
        assertTrue(again.getAlreadyTerminal());
        assertEquals(released.getSession(), again.getSession());
        refused(Status.Code.FAILED_PRECONDITION, () -> teamA.renewKvSession(RenewKvSessionRequest.newBuilder()
                .setSessionId(s.getRef().getSessionId()).build()));
    }

    @Test
    void leasesExpireThroughTheReaperAndTombstonesVanishAfterRetention() {
        KvSession s = teamA.allocateKvSession(allocation().setLease(Duration.newBuilder().setSeconds(5)).build());
        clock.advance(java.time.Duration.ofSeconds(5));
        reaper.sweep().await().indefinitely();
        KvSession expired = teamA.getKvSession(get(s));
        assertEquals(KvSessionState.KV_SESSION_STATE_EXPIRED, expired.getState());
        assertEquals("lease expired", expired.getTerminalReason());
        clock.advance(java.time.Duration.ofMinutes(10));
        reaper.sweep().await().indefinitely();
        refused(Status.Code.NOT_FOUND, () -> teamA.getKvSession(get(s)));
    }

    @Test
    void aTenantAtItsQuotaIsExhausted() {
        OpenEngineKvBlockingStub quota = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                RedisTenancyProfile.QUOTA_TEAM_KEY);
        List<KvSession> live = new ArrayList<>();
        for (int i = 0; i < RedisTenancyProfile.QUOTA; i++) {
            live.add(quota.allocateKvSession(allocation().build()));
        }
        StatusRuntimeException full = refused(Status.Code.RESOURCE_EXHAUSTED,
                () -> quota.allocateKvSession(allocation().build()));
        assertEquals("ERROR_CODE_OVERLOADED", errorCode(full));
        live.forEach(s -> quota.releaseKvSession(release(s)));
        quota.allocateKvSession(allocation().build());
    }

    @Test
    void aRedisOutageIsUnavailableAndReadinessFollowsIt() {
        RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
                .body(containsString("session-store-redis"));
        RedisTestResource.server().stop();
        try {
            StatusRuntimeException down = refused(Status.Code.UNAVAILABLE,
                    () -> teamA.allocateKvSession(allocation().build()));
            assertTrue(down.getStatus().getDescription().contains("session store"));
            RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().statusCode(503);
        } finally {
            RedisTestResource.server().start();
        }
        KvSession after = teamA.allocateKvSession(allocation().build());
        assertEquals(KvSessionState.KV_SESSION_STATE_ALLOCATED, after.getState());
        RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200);
    }

    @Test
    void upstreamRpcsWeDoNotServeSayWhy() {
        InferenceGrpc.InferenceBlockingStub inference = GrpcTestClient.withKey(
                InferenceGrpc.newBlockingStub(client.channel()), RedisTenancyProfile.TEAM_A_KEY);
        StatusRuntimeException generate = refused(Status.Code.NOT_FOUND, () -> inference.generate(
                GenerateRequest.newBuilder().setRequestId("r").setModel("no-such-model").setPrompt("p").build()).next());
        assertTrue(generate.getStatus().getDescription().contains("no route serves model 'no-such-model'"));
        ControlGrpc.ControlBlockingStub control = GrpcTestClient.withKey(ControlGrpc.newBlockingStub(
                client.channel()), RedisTenancyProfile.TEAM_A_KEY);
        StatusRuntimeException loras = refused(Status.Code.UNIMPLEMENTED,
                () -> control.listLoras(ListLorasRequest.getDefaultInstance()));
        assertTrue(loras.getStatus().getDescription().contains("ListLoras"));
    }

    @Test
    void serverInfoAdvertisesTheSessionLifecycle() {
        ServerInfo info = GrpcTestClient.withKey(ControlGrpc.newBlockingStub(client.channel()),
                RedisTenancyProfile.TEAM_A_KEY).getServerInfo(GetServerInfoRequest.getDefaultInstance());
        KvConnectorInfo kv = info.getKvConnector();
        assertTrue(info.getSchemaRevision() > 0);
        assertTrue(kv.getSupportsCallerAllocation() && kv.getSupportsRenewableLeases()
                && kv.getSupportsExplicitRelease() && kv.getSupportsSessionLookup());
        assertEquals(List.of(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST,
                KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST), kv.getSupportedScheduleStylesList());
        assertEquals(30, kv.getSessionLimits().getDefaultLease().getSeconds());
        assertEquals(600, kv.getSessionLimits().getMaxLease().getSeconds());
        assertEquals(RedisTenancyProfile.QUOTA, kv.getSessionLimits().getMaxLiveSessionsPerTenant());
    }

    @Test
    void reflectionListsOurServices() throws Exception {
        CompletableFuture<Set<String>> listed = new CompletableFuture<>();
        StreamObserver<Reflection.ServerReflectionRequest> requests = ServerReflectionGrpc
                .newStub(client.channel()).serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(Reflection.ServerReflectionResponse response) {
                        listed.complete(response.getListServicesResponse().getServiceList().stream()
                                .map(Reflection.ServiceResponse::getName).collect(Collectors.toSet()));
                    }

                    @Override
                    public void onError(Throwable t) {
                        listed.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        requests.onNext(Reflection.ServerReflectionRequest.newBuilder().setListServices("*").build());
        Set<String> services = listed.get(10, TimeUnit.SECONDS);
        requests.onCompleted();
        assertTrue(services.containsAll(Set.of("openengine.v1.OpenEngineKv", "openengine.v1.Inference",
                "openengine.v1.Control")), services.toString());
    }

    @Test
    void metricsCountTheLifecycle() {
        KvSession s = teamA.allocateKvSession(allocation().build());
        teamA.releaseKvSession(release(s));
        String metrics = RestAssured.given().baseUri(base.toString()).get("/q/metrics").asString();
        assertTrue(metrics.contains("handoff_sessions_allocated_total"), metrics);
        assertTrue(metrics.contains("handoff_session_transitions_total{to=\"RELEASED\"}"));
        assertTrue(metrics.contains("handoff_sessions{state=\"ALLOCATED\"}"));
        assertTrue(metrics.contains("handoff_reaper_lag_seconds"));
        assertTrue(metrics.contains("handoff_cleanup_outcomes_total"));
        assertEquals(SessionState.RELEASED, store.find(s.getRef().getSessionId()).await().indefinitely()
                .orElseThrow().state());
    }

    private static GetKvSessionRequest get(KvSession s) {
        return GetKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId()).build();
    }

    private static ReleaseKvSessionRequest release(KvSession s) {
        return ReleaseKvSessionRequest.newBuilder().setSessionId(s.getRef().getSessionId()).build();
    }
}
