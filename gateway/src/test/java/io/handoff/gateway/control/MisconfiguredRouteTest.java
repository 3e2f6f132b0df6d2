package io.handoff.gateway.control;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateSessions;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route whose every endpoint of a pool is out on a probe's verdict (it serves another model, it answers as the
 * other role) is misconfigured, not overloaded: the client is told UNAVAILABLE, not retryable, with the verdict, on
 * both fronts; and, as for every refusal, nothing is allocated and no engine of the route is contacted.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class MisconfiguredRouteTest extends ControlPlaneTest {

    private static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of("handoff-error-code",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("handoff-retryable",
            Metadata.ASCII_STRING_MARSHALLER);

    @Inject
    FleetSampler sampler;

    @Inject
    SessionStore store;

    @BeforeEach
    void sample() {
        sampler.sampleNow().await().indefinitely();
    }

    @Inject
    MeterRegistry registry;

    @Test
    void aPoolServingAnotherModelIsUnavailableWithTheVerdict() {
        double counted = refused("wrong-model", ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, "wrong-model-endpoints");
        StatusRuntimeException refused = refusedOverGrpc("m-wrong-model",
                List.of(SimFleetTestResource.engine(Family.VLLM, Role.PREFILL)));
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode());
        assertEquals(ErrorCode.ERROR_CODE_MODEL_NOT_FOUND.name(), refused.getTrailers().get(ERROR_CODE));
        assertEquals("false", refused.getTrailers().get(RETRYABLE));
        String message = refused.getStatus().getDescription();
        assertTrue(message.contains("no decode endpoint of route wrong-model is available"), message);
        assertTrue(message.contains("wrong model: endpoint d-0 does not serve model 'sim-model'"), message);
        assertFalse(message.contains("http://"), message);

        Response http = refusedOverHttp("m-wrong-model");
        assertEquals(503, http.statusCode(), http.asString());
        assertEquals("ERROR_CODE_MODEL_NOT_FOUND", http.jsonPath().getString("error.code"));
        assertEquals("service_unavailable_error", http.jsonPath().getString("error.type"));
        assertTrue(http.jsonPath().getString("error.message").contains("wrong model"), http.asString());
        // one count per front, told apart from an unknown model (the same code) by the reason
        assertEquals(counted + 2, refused("wrong-model", ErrorCode.ERROR_CODE_MODEL_NOT_FOUND,
                "wrong-model-endpoints"));
    }

    @Test
    void aPoolOfTheWrongRoleIsUnavailableWithTheVerdict() {
        double counted = refused("wrong-role", ErrorCode.ERROR_CODE_ROLE_MISMATCH, "wrong-role-endpoints");
        StatusRuntimeException refused = refusedOverGrpc("m-wrong-role",
                List.of(SimFleetTestResource.engine(Family.SGLANG, Role.DECODE)));
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode());
        assertEquals(ErrorCode.ERROR_CODE_ROLE_MISMATCH.name(), refused.getTrailers().get(ERROR_CODE));
        assertEquals("false", refused.getTrailers().get(RETRYABLE));
        String message = refused.getStatus().getDescription();
        assertTrue(message.contains("no prefill endpoint of route wrong-role is available"), message);
        assertTrue(message.contains("wrong role: endpoint p-0 answers as DECODE"), message);

        Response http = refusedOverHttp("m-wrong-role");
        assertEquals(503, http.statusCode(), http.asString());
        assertEquals("ERROR_CODE_ROLE_MISMATCH", http.jsonPath().getString("error.code"));
        assertEquals(counted + 2, refused("wrong-role", ErrorCode.ERROR_CODE_ROLE_MISMATCH, "wrong-role-endpoints"));
    }

    private double refused(String route, ErrorCode code, String reason) {
        Counter counter = registry.find("handoff.generate.refused").tag("route", route).tag("code", code.name())
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private StatusRuntimeException refusedOverGrpc(String model, List<SimEngine> engines) {
        GenerateSessions sessions = new GenerateSessions(store);
        long sessionsBefore = sessions.count();
        long requestsBefore = engines.stream().mapToLong(e -> e.stat("requests_total")).sum();
        InferenceGrpc.InferenceBlockingStub inference = GrpcTestClient.withKey(
                InferenceGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        GenerateRequest request = GenerateRequest.newBuilder().setRequestId("misconfigured-" + UUID.randomUUID())
                .setModel(model).setPrompt("is this route set up right?")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(4)).build();
        StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
                () -> inference.generate(request).forEachRemaining(event -> { }));
        assertEquals(sessionsBefore, sessions.count(), "a refused Generate allocated a session");
        assertEquals(requestsBefore, engines.stream().mapToLong(e -> e.stat("requests_total")).sum(),
                "a refused Generate reached an engine");
        return refused;
    }

    private Response refusedOverHttp(String model) {
        return RestAssured.given().baseUri("http://127.0.0.1").port(base.getPort())
                .header("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY)
                .contentType("application/json")
                .body("{\"model\":\"" + model + "\",\"prompt\":\"is this route set up right?\",\"max_tokens\":4}")
                .post("/v1/completions");
    }
}
