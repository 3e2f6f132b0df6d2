package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.gateway.demo.DemoFleet;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The OpenAI completions front on the embedded demo fleet, with a real HTTP client. */
@QuarkusTest
class OpenAiCompletionsTest {

    @TestHTTPResource("/")
    URL base;

    @Inject
    RouteRegistry routes;

    @Inject
    DemoFleet demo;

    @Inject
    io.vertx.core.Vertx vertx;

    private static final java.util.Map<String, SimEngine> aggregated = new java.util.concurrent.ConcurrentHashMap<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @ParameterizedTest
    @ValueSource(strings = {"demo-vllm", "demo-sglang", "demo-trtllm"})
    void theSameBodyGivesTheSameTokensThroughHandoffAsDirectlyOnTheEngine(String model) throws Exception {
        String body = "{\"model\":\"%s\",\"prompt\":\"Disaggregated serving\",\"max_tokens\":7,\"temperature\":0,"
                + "\"stream\":%s%s}";
        HttpResponse<String> direct = post(directUri(model), body.formatted("sim-model", "false", ""));
        assertEquals(200, direct.statusCode(), direct.body());
        String expected = OpenAiJson.parse(direct.body()).path("choices").path(0).path("text").asText();

        HttpResponse<String> whole = post(gateway("/v1/completions"), body.formatted(model, "false", ""));
        assertEquals(200, whole.statusCode(), whole.body());
        JsonNode answer = OpenAiJson.parse(whole.body());
        assertEquals(expected, answer.path("choices").path(0).path("text").asText());
        assertEquals("length", answer.path("choices").path(0).path("finish_reason").asText());
        assertEquals(7, answer.path("usage").path("completion_tokens").asInt());

        HttpResponse<String> streamed = post(gateway("/v1/completions"), body.formatted(model, "true",
                ",\"stream_options\":{\"include_usage\":true}"));
        assertEquals(200, streamed.statusCode(), streamed.body());
        assertTrue(streamed.headers().firstValue("content-type").orElse("").startsWith("text/event-stream"));
        List<String> data = dataLines(streamed.body());
        assertEquals("[DONE]", data.get(data.size() - 1));
        StringBuilder text = new StringBuilder();
        int usageChunks = 0;
        for (String d : data.subList(0, data.size() - 1)) {
            JsonNode chunk = OpenAiJson.parse(d);
            assertEquals("text_completion", chunk.path("object").asText());
            if (chunk.path("choices").isEmpty()) {
                usageChunks++;
                assertEquals(7, chunk.path("usage").path("completion_tokens").asInt());
            } else {
                text.append(chunk.path("choices").path(0).path("text").asText());
            }
        }
        assertEquals(expected, text.toString());
        assertEquals(1, usageChunks);
    }

    @Test
    void streamedChunksCarryTheirLogprobsAndTheAnswersIdentity() throws Exception {
        HttpResponse<String> streamed = post(gateway("/v1/completions"), "{\"model\":\"demo-vllm\",\"prompt\":"
                + "\"Disaggregated serving\",\"max_tokens\":5,\"temperature\":0,\"logprobs\":2,\"stream\":true}");
        assertEquals(200, streamed.statusCode(), streamed.body());
        List<String> data = dataLines(streamed.body());
        assertEquals("[DONE]", data.get(data.size() - 1));
        JsonNode first = OpenAiJson.parse(data.get(0));
        int tokens = 0;
        for (String d : data.subList(0, data.size() - 1)) {
            JsonNode chunk = OpenAiJson.parse(d);
            for (String field : List.of("id", "created", "model")) {
                assertEquals(first.path(field), chunk.path(field), field + " in " + d);
            }
            assertTrue(first.path("id").asText().startsWith("cmpl-"), d);
            JsonNode choice = chunk.path("choices").path(0);
            if (choice.path("finish_reason").isNull()) {
                tokens++;
                JsonNode logprobs = choice.path("logprobs");
                assertEquals(logprobs.path("tokens").size(), logprobs.path("token_logprobs").size(), d);
                assertTrue(logprobs.path("token_logprobs").size() >= 1, d);
                assertTrue(logprobs.path("token_logprobs").path(0).isNumber(), d);
                assertTrue(logprobs.path("top_logprobs").path(0).isObject(), d);
            } else {
                assertEquals("length", choice.path("finish_reason").asText(), d);
                assertTrue(choice.path("logprobs").isNull(), d);
            }
        }
        assertEquals(5, tokens);
    }

    @ParameterizedTest
    @ValueSource(strings = {"kv_transfer_params", "bootstrap_room", "disaggregated_params"})
    void nativeDisaggregationFieldsAreRefusedNeverForwarded(String field) throws Exception {
        HttpResponse<String> r = post(gateway("/v1/completions"),
                "{\"model\":\"demo-vllm\",\"prompt\":\"x\",\"" + field + "\":{}}");
        assertEquals(400, r.statusCode());
        JsonNode error = OpenAiJson.parse(r.body()).path("error");
        assertEquals(field, error.path("param").asText());
        assertEquals("invalid_request_error", error.path("type").asText());
    }

    @Test
    void errorsComeInTheOpenAiShapeWithTheirStatus() throws Exception {
        assertError(post(gateway("/v1/completions"), "{\"model\":\"nope\",\"prompt\":\"x\"}"), 404,
                "ERROR_CODE_MODEL_NOT_FOUND");
        assertError(post(gateway("/v1/completions"), "{\"model\":\"demo-vllm\""), 400, "ERROR_CODE_INVALID_ARGUMENT");
        assertError(post(gateway("/v1/completions"), "{\"model\":\"demo-vllm\",\"prompt\":[\"a\",\"b\"]}"), 400,
                "ERROR_CODE_INVALID_ARGUMENT");
        assertError(post(gateway("/v1/completions"), "{\"model\":\"demo-vllm\",\"prompt\":\"x\",\"max_tokens\":\"7\"}"),
                400, "ERROR_CODE_INVALID_ARGUMENT");
    }

    @Test
    void aFailedKvTransferIsTheEnginesFailureAnsweredAsABadGateway() throws Exception {
        var route = routes.forModel("demo-sglang").orElseThrow();
        List<SimEngine> decodes = route.decode().members().stream()
                .map(m -> demo.engine(m.endpoint()).orElseThrow()).toList();
        String peer = "10.1.2.3:8998";
        decodes.forEach(d -> d.faults().errorNext(500, 1, "KVPoll failed: the transfer from " + peer + " failed"));
        try {
            HttpResponse<String> r = post(gateway("/v1/completions"),
                    "{\"model\":\"demo-sglang\",\"prompt\":\"x\",\"max_tokens\":4}");
            assertError(r, 502, "ERROR_CODE_KV_TRANSFER_FAILED");
            JsonNode error = OpenAiJson.parse(r.body()).path("error");
            assertEquals("engine_error", error.path("type").asText(), r.body());
            assertTrue(!error.path("message").asText().contains(peer), r.body());
        } finally {
            decodes.forEach(d -> d.faults().clear());
        }
    }

    @Test
    void modelsListsEveryRouteName() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(gateway("/v1/models")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        List<String> ids = new ArrayList<>();
        OpenAiJson.parse(r.body()).path("data").forEach(m -> ids.add(m.path("id").asText()));
        assertTrue(ids.containsAll(List.of("demo-vllm", "demo-sglang", "demo-trtllm")), ids.toString());
    }

    @Test
    void aClientThatGoesAwayMidStreamCancelsTheRequestAndLeavesNoKvPinned() throws Exception {
        var route = routes.forModel("demo-vllm").orElseThrow();
        SimEngine prefill = demo.engine(route.prefill().members().get(0).endpoint())
                .orElseThrow();
        SimEngine decode = demo.engine(route.decode().members().get(0).endpoint())
                .orElseThrow();
        long abortedBefore = decode.stat("requests_aborted");
        HttpResponse<java.io.InputStream> r = http.send(HttpRequest.newBuilder(gateway("/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"demo-vllm\",\"prompt\":\"a long answer\",\"max_tokens\":200,\"stream\":true}"))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        BufferedReader reader = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
        String first = reader.readLine();
        assertTrue(first.startsWith("data: {"), first);
        r.body().close();
        await().atMost(Duration.ofSeconds(10)).until(() -> decode.stat("requests_aborted") > abortedBefore);
        await().atMost(Duration.ofSeconds(10)).until(() -> decode.stat("kv_blocks_pinned_now") == 0
                && prefill.stat("kv_blocks_pinned_now") == 0);
    }

    private void assertError(HttpResponse<String> r, int status, String code) {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode error = OpenAiJson.parse(r.body()).path("error");
        assertEquals(code, error.path("code").asText(), r.body());
        assertTrue(error.path("message").asText().length() > 0);
    }

    private URI directUri(String model) {
        var route = routes.forModel(model).orElseThrow();
        SimEngine engine = demo.engine(route.decode().members().get(0).endpoint())
                .orElseThrow();
        if (!route.family().equals("vllm")) {
            // SGLang and TensorRT-LLM decode servers in PD mode refuse requests without handoff fields
            engine = aggregated(route.family());
        }
        return URI.create(engine.baseUrl() + "/v1/completions");
    }

    /** An aggregated engine of the family (PD-mode servers need handoff fields): the engine's plain answer. */
    private SimEngine aggregated(String family) {
        return aggregated.computeIfAbsent(family, f -> io.handoff.simulator.Engines.create(
                io.handoff.simulator.Family.parse(f), java.util.Map.of("role", "both", "model", "sim-model"))
                .startBlocking(vertx));
    }

    @org.junit.jupiter.api.AfterAll
    static void stopAggregated() {
        aggregated.values().forEach(SimEngine::stopBlocking);
    }

    private URI gateway(String path) {
        return URI.create(base.toString().replaceAll("/$", "") + path);
    }

    private HttpResponse<String> post(URI uri, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> dataLines(String sse) {
        List<String> out = new ArrayList<>();
        for (String line : sse.split("\n")) {
            if (line.startsWith("data: ")) {
                out.add(line.substring(6));
            }
        }
        return out;
    }
}
