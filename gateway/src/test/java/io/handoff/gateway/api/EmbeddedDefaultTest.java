package io.handoff.gateway.api;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.net.URL;

import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The gateway as the README's run command starts it: no configuration, sessions in memory, auth off (every
 * caller is the default tenant), nothing else installed.
 */
@QuarkusTest
class EmbeddedDefaultTest {

    @TestHTTPResource("/")
    URL base;

    @Test
    void servesTheSessionLifecycleWithNothingElseInstalled() throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            var kv = OpenEngineKvGrpc.newBlockingStub(client.channel());
            KvSession s = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r1")
                    .setModel("demo").setIdempotencyKey("k1").build());
            assertEquals(KvSessionState.KV_SESSION_STATE_ALLOCATED, s.getState());
            assertEquals(KvSessionState.KV_SESSION_STATE_RELEASED, kv.releaseKvSession(ReleaseKvSessionRequest
                    .newBuilder().setSessionId(s.getRef().getSessionId()).build()).getSession().getState());
            StatusRuntimeException gone = assertThrows(StatusRuntimeException.class, () -> kv.getKvSession(
                    GetKvSessionRequest.newBuilder().setSessionId("ffffffffffffffffffffffffffffffff").build()));
            assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
        }
        RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
                .body(containsString("session-store-memory"));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"demo-vllm", "demo-sglang", "demo-trtllm"})
    void runsAGenerateOnEachDemoRoute(String model) throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            var inference = io.handoff.openengine.v1.InferenceGrpc.newBlockingStub(client.channel());
            java.util.List<io.handoff.openengine.v1.GenerateResponse> events = new java.util.ArrayList<>();
            inference.generate(io.handoff.openengine.v1.GenerateRequest.newBuilder().setRequestId("demo-" + model)
                    .setModel(model).setPrompt("The quick brown fox")
                    .setStopping(io.handoff.openengine.v1.StoppingOptions.newBuilder().setMaxTokens(8)).build())
                    .forEachRemaining(events::add);
            StringBuilder text = new StringBuilder();
            events.forEach(e -> text.append(e.getToken().getText()));
            System.out.println(model + ": " + events.size() + " events, text=" + text + ", last=" + events.get(events.size() - 1));
            assertEquals(true, events.get(events.size() - 1).hasFinished(), events.toString());
        }
    }
}
