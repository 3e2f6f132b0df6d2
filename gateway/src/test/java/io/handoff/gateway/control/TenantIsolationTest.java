package io.handoff.gateway.control;

import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.handoff.gateway.api.grpc.GrpcStatuses;
import io.handoff.gateway.api.grpc.ParticipantMetadata;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.handoff.openengine.v1.StoppingOptions;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.api.Test;

import java.util.Iterator;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Another tenant's session or request is indistinguishable from one that does not exist, on every path that names
 * one: OpenEngineKv Get, Renew and Release, the REST mirror's three, Control.Abort by request id and by session, and
 * a participant's prefill and decode legs. Each is answered exactly as for an unknown id (status, description with
 * the id itself left out, OpenEngine error code, REST body), and the other tenant's session is as it was.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class TenantIsolationTest extends ControlPlaneTest {

    private static final String UNKNOWN = "0123456789abcdef0123456789abcdef";

    private OpenEngineKvGrpc.OpenEngineKvBlockingStub kv(String key) {
        return GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()), key);
    }

    private KvSession teamBSession() {
        String unique = UUID.randomUUID().toString();
        return kv(ControlPlaneProfile.TEAM_B_KEY).allocateKvSession(AllocateKvSessionRequest.newBuilder()
                .setRequestId("iso-" + unique).setModel("m-vllm").setIdempotencyKey("iso-" + unique).build());
    }

    /** What a caller can see of a refusal: status, description (without the id it named) and error code. */
    private static String seen(String id, Supplier<?> call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::get);
        Metadata trailers = e.getTrailers() == null ? new Metadata() : e.getTrailers();
        return e.getStatus().getCode() + " | " + String.valueOf(e.getStatus().getDescription()).replace(id, "<id>")
                + " | " + trailers.get(Metadata.Key.of(GrpcStatuses.ERROR_CODE_TRAILER,
                        Metadata.ASCII_STRING_MARSHALLER));
    }

    private static void indistinguishable(String foreignId, Function<String, Supplier<?>> call) {
        String foreign = seen(foreignId, call.apply(foreignId));
        String unknown = seen(UNKNOWN, call.apply(UNKNOWN));
        assertEquals(unknown, foreign);
        assertFalse(foreign.startsWith("OK"));
    }

    @Test
    void openEngineKvAnswersAnotherTenantsSessionAsAnUnknownOne() {
        KvSession b = teamBSession();
        String id = b.getRef().getSessionId();
        var a = kv(ControlPlaneProfile.TEAM_A_KEY);
        indistinguishable(id, s -> () -> a.getKvSession(GetKvSessionRequest.newBuilder().setSessionId(s).build()));
        indistinguishable(id, s -> () -> a.renewKvSession(RenewKvSessionRequest.newBuilder().setSessionId(s)
                .setExpectedEpoch(1).build()));
        indistinguishable(id, s -> () -> a.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(s)
                .setExpectedEpoch(1).build()));
        assertEquals(b, kv(ControlPlaneProfile.TEAM_B_KEY).getKvSession(GetKvSessionRequest.newBuilder()
                .setSessionId(id).build()));
    }

    @Test
    void theRestMirrorAnswersAnotherTenantsSessionAsAnUnknownOne() {
        KvSession b = teamBSession();
        String id = b.getRef().getSessionId();
        for (String op : new String[] {"", "/renew", "/release"}) {
            String foreign = rest(op.isEmpty() ? "GET" : "POST", "/v1/kv-sessions/" + id + op);
            String unknown = rest(op.isEmpty() ? "GET" : "POST", "/v1/kv-sessions/" + UNKNOWN + op);
            assertEquals(unknown.replace(UNKNOWN, "<id>"), foreign.replace(id, "<id>"), op);
            assertEquals("404", foreign.substring(0, 3), foreign);
        }
        assertEquals(b, kv(ControlPlaneProfile.TEAM_B_KEY).getKvSession(GetKvSessionRequest.newBuilder()
                .setSessionId(id).build()));
    }

    @Test
    void abortAnswersAnotherTenantsRequestAndSessionAsUnknownOnes() {
        GenerateCall running = GenerateCall.start(client, ControlPlaneProfile.TEAM_B_KEY, "m-vllm", 250)
                .awaitFirstToken();
        indistinguishable(running.requestId(), r -> () -> control.abort(AbortRequest.newBuilder().setRequestId(r)
                .build()));
        KvSession b = teamBSession();
        String id = b.getRef().getSessionId();
        indistinguishable(id, s -> () -> control.abort(AbortRequest.newBuilder().setKvSession(KvSessionRef
                .newBuilder().setSessionId(s)).build()));
        assertFalse(running.isDone(), "team-b's request goes on");
        assertEquals(b, kv(ControlPlaneProfile.TEAM_B_KEY).getKvSession(GetKvSessionRequest.newBuilder()
                .setSessionId(id).build()));
        assertEquals(AbortStatus.ABORT_STATUS_ABORTED, control(ControlPlaneProfile.TEAM_B_KEY).abort(AbortRequest
                .newBuilder().setRequestId(running.requestId()).build()).getStatus());
        running.awaitEnd();
    }

    @Test
    void participantLegsAnswerAnotherTenantsSessionAsAnUnknownOne() {
        KvSession b = teamBSession();
        String id = b.getRef().getSessionId();
        indistinguishable(id, s -> () -> generate("prefill", s, request()).hasNext());
        indistinguishable(id, s -> () -> generate("decode", null, request().toBuilder().setKv(KvOptions.newBuilder()
                .setSession(KvSessionRef.newBuilder().setSessionId(s))).build()).hasNext());
        assertEquals(b, kv(ControlPlaneProfile.TEAM_B_KEY).getKvSession(GetKvSessionRequest.newBuilder()
                .setSessionId(id).build()));
    }

    private Iterator<?> generate(String leg, String sessionId, GenerateRequest request) {
        Metadata m = new Metadata();
        m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + ControlPlaneProfile.TEAM_A_KEY);
        m.put(Metadata.Key.of(ParticipantMetadata.LEG, Metadata.ASCII_STRING_MARSHALLER), leg);
        if (sessionId != null) {
            m.put(Metadata.Key.of(ParticipantMetadata.SESSION, Metadata.ASCII_STRING_MARSHALLER), sessionId);
        }
        return InferenceGrpc.newBlockingStub(client.channel())
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m)).generate(request);
    }

    private static GenerateRequest request() {
        return GenerateRequest.newBuilder().setRequestId("iso-" + UUID.randomUUID()).setModel("m-vllm")
                .setPrompt("isolation").setStopping(StoppingOptions.newBuilder().setMaxTokens(4)).build();
    }

    /** Status and body of a REST call as team-a. */
    private String rest(String method, String path) {
        RequestSpecification spec = RestAssured.given().header("Authorization", "Bearer "
                + ControlPlaneProfile.TEAM_A_KEY).contentType("application/json");
        var response = method.equals("GET") ? spec.get(path) : spec.body("{}").post(path);
        return response.statusCode() + " " + response.body().asString();
    }
}
