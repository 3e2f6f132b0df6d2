package io.handoff.gateway.orchestration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.openengine.v1.TokenIds;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client reads about an engine names it by its configured name, never by its address: on a failing leg of
 * either kind, over gRPC and over HTTP, whether the address came from the connector or from the engine's own words.
 * And a request longer than the engines' context is refused before anything is allocated, as the engine would.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class EngineAddressesTest extends FleetTestSupport {

    private static final String ROUTE = FleetRoutes.VLLM_CONTEXT_FIRST;
    /** The vLLM simulators' max_model_len, which their /v1/models reports. */
    private static final int CONTEXT = 8192;
    private static final String PEER = "10.1.2.3";
    private static final String ENGINE_WORDS = "KV pull from " + PEER + ":5600 failed; see http://" + PEER
            + ":8000/debug";

    @Inject
    FleetSampler sampler;

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void discovered() {
        sampler.sampleNow().await().atMost(Duration.ofSeconds(30));
    }

    /**
     * A decode that failed before it pulled leaves the prefill's parked KV on the vLLM producer until its hold ends:
     * the hold is made to end, so that the tests after this one find the fleet holding nothing.
     */
    @AfterEach
    void holdsEnded() {
        fleet().vllm().advanceClock(EngineFleet.HOLD.plusSeconds(1));
        awaitNoKvPinned(fleet().vllm());
    }

    @ParameterizedTest
    @ValueSource(strings = {"prefill", "decode"})
    void anEnginesErrorReachesTheClientWithItsNameAndWithoutAnyAddress(String leg) throws Exception {
        SimEngine engine = leg.equals("prefill") ? fleet().vllm().prefill() : fleet().vllm().decode();
        String name = leg + "-0";

        engine.faults().errorNext(400, 1, ENGINE_WORDS);
        List<GenerateResponse> events = run(request(ROUTE, requestId("address-grpc"), 4));
        GenerateResponse last = events.get(events.size() - 1);
        assertTrue(last.hasError(), events.toString());
        assertClientSafe(last.getError().getMessage(), engine, name);

        engine.faults().errorNext(400, 1, ENGINE_WORDS);
        HttpResponse<String> answer = completion("{\"model\":\"" + ROUTE + "\",\"prompt\":\"" + prompt(leg)
                + "\",\"max_tokens\":4}");
        assertEquals(400, answer.statusCode(), answer.body());
        assertClientSafe(JSON.readTree(answer.body()).path("error").path("message").asText(), engine, name);
    }

    @Test
    void aDecodeEngineThatIsDownIsNamedNotAddressed() {
        SimEngine decode = fleet().vllm().decode();
        decode.crash(-1);
        List<GenerateResponse> events = run(request(ROUTE, requestId("address-down"), 4));
        GenerateResponse last = events.get(events.size() - 1);
        assertTrue(last.hasError(), events.toString());
        String message = last.getError().getMessage();
        assertTrue(message.contains("decode-0: connection refused"), message);
        assertClientSafe(message, decode, "decode-0");
    }

    @Test
    void maxTokensBeyondTheContextIsRefusedBeforeAnythingIsAllocated() throws Exception {
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();

        StatusRuntimeException refused = start(request(ROUTE, requestId("too-long"), CONTEXT + 1)).awaitStatus();
        assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
        assertTrue(refused.getStatus().getDescription().contains("stopping.max_tokens 8193 is more than the context "
                + "length of route " + ROUTE + " (8192 tokens)"), refused.getStatus().getDescription());

        GenerateRequest ids = GenerateRequest.newBuilder().setRequestId(requestId("too-long-ids")).setModel(ROUTE)
                .setTokenIds(TokenIds.newBuilder().addAllIds(IntStream.range(0, CONTEXT - 10).boxed().toList()))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(11)).build();
        refused = start(ids).awaitStatus();
        assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
        assertTrue(refused.getStatus().getDescription().contains("the prompt's 8182 tokens and stopping.max_tokens "
                + "11"), refused.getStatus().getDescription());

        HttpResponse<String> tooMany = completion("{\"model\":\"" + ROUTE + "\",\"prompt\":\"hi\",\"max_tokens\":100000}");
        assertEquals(400, tooMany.statusCode(), tooMany.body());
        JsonNode error = JSON.readTree(tooMany.body()).path("error");
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT.name(), error.path("code").asText());
        assertTrue(error.path("message").asText().contains("context length"), tooMany.body());

        HttpResponse<String> beyondTheField = completion("{\"model\":\"" + ROUTE
                + "\",\"prompt\":\"hi\",\"max_tokens\":99999999999}");
        assertEquals(400, beyondTheField.statusCode(), beyondTheField.body());
        assertEquals("max_tokens", JSON.readTree(beyondTheField.body()).path("error").path("param").asText());

        assertEquals(sessionsBefore, sessions.count(), "a refused request allocated a session");
        assertEquals(requestsBefore, fleet().requestsTotal(), "a refused request reached an engine");

        List<GenerateResponse> fits = run(request(ROUTE, requestId("fits"), 4));
        assertTrue(fits.get(fits.size() - 1).hasFinished() || fits.stream().anyMatch(GenerateResponse::hasFinished),
                fits.toString());
    }

    private static void assertClientSafe(String message, SimEngine engine, String name) {
        assertTrue(message.contains(name), "the endpoint by its configured name: " + message);
        assertFalse(message.contains(PEER), "an address the engine named: " + message);
        assertFalse(message.contains("://"), "a URL: " + message);
        assertFalse(message.contains("127.0.0.1"), "the engine's address: " + message);
        assertFalse(message.contains(":" + engine.port()), "the engine's port: " + message);
    }

    private HttpResponse<String> completion(String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + base.getPort() + "/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
