package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.demo.DemoFleet;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Engines;
import io.handoff.simulator.Family;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /v1/chat/completions} on the embedded demo fleet, with real HTTP clients: the same messages give the same
 * content through Handoff as directly on an aggregated engine of the family (streamed and not, and over gRPC in
 * every style of every route), native disaggregation fields and tool calls are refused, errors have the OpenAI
 * shape, and a client that goes away in any phase leaves no KV pinned.
 */
@QuarkusTest
class OpenAiChatTest {

    private static final String MESSAGES = "[{\"role\":\"system\",\"content\":\"You answer briefly.\"},"
            + "{\"role\":\"user\",\"content\":\"What does a disaggregated handoff move?\"}]";
    private static final Map<String, SimEngine> AGGREGATED = new ConcurrentHashMap<>();
    private static final AtomicInteger IDS = new AtomicInteger();

    @TestHTTPResource("/")
    URL base;

    @Inject
    RouteRegistry routes;

    @Inject
    DemoFleet demo;

    @Inject
    io.vertx.core.Vertx vertx;

    private final HttpClient http = HttpClient.newHttpClient();

    @ParameterizedTest
    @ValueSource(strings = {"demo-vllm", "demo-sglang", "demo-trtllm"})
    void theSameMessagesGiveTheSameContentThroughHandoffAsDirectlyOnTheEngine(String model) throws Exception {
        String body = "{\"model\":\"%s\",\"messages\":" + MESSAGES + ",\"max_tokens\":7,\"temperature\":0,"
                + "\"stream\":%s%s}";
        HttpResponse<String> direct = post(direct(model), body.formatted("sim-model", "false", ""));
        assertEquals(200, direct.statusCode(), direct.body());
        String expected = OpenAiJson.parse(direct.body()).path("choices").path(0).path("message").path("content").asText();
        assertFalse(expected.isBlank());

        HttpResponse<String> whole = post(gateway("/v1/chat/completions"), body.formatted(model, "false", ""));
        assertEquals(200, whole.statusCode(), whole.body());
        JsonNode answer = OpenAiJson.parse(whole.body());
        assertEquals("chat.completion", answer.path("object").asText());
        assertTrue(answer.path("id").asText().startsWith("chatcmpl-"), answer.path("id").asText());
        assertEquals(model, answer.path("model").asText());
        JsonNode choice = answer.path("choices").path(0);
        assertEquals("assistant", choice.path("message").path("role").asText());
        assertEquals(expected, choice.path("message").path("content").asText());
        assertEquals("length", choice.path("finish_reason").asText());
        assertEquals(7, answer.path("usage").path("completion_tokens").asInt());
        assertEquals(OpenAiJson.parse(direct.body()).path("usage").path("prompt_tokens").asInt(),
                answer.path("usage").path("prompt_tokens").asInt(), "the engine applied the same template");

        // streamed: the same deltas as the engine streams them, the role first, the usage chunk, then [DONE]
        String streamOptions = ",\"stream_options\":{\"include_usage\":true}";
        List<String> directDeltas = contents(dataLines(post(direct(model),
                body.formatted("sim-model", "true", streamOptions)).body()));
        HttpResponse<String> streamed = post(gateway("/v1/chat/completions"),
                body.formatted(model, "true", streamOptions));
        assertEquals(200, streamed.statusCode(), streamed.body());
        assertTrue(streamed.headers().firstValue("content-type").orElse("").startsWith("text/event-stream"));
        List<String> data = dataLines(streamed.body());
        assertEquals("[DONE]", data.get(data.size() - 1));
        JsonNode first = OpenAiJson.parse(data.get(0));
        assertEquals("assistant", first.path("choices").path(0).path("delta").path("role").asText());
        assertEquals(directDeltas, contents(data), "the content arrives in the engine's own pieces");
        assertEquals(expected, String.join("", contents(data)));
        int usageChunks = 0;
        String finish = null;
        for (String d : data.subList(0, data.size() - 1)) {
            JsonNode chunk = OpenAiJson.parse(d);
            assertEquals("chat.completion.chunk", chunk.path("object").asText());
            assertEquals(first.path("id").asText(), chunk.path("id").asText());
            if (chunk.path("choices").isEmpty()) {
                usageChunks++;
                assertEquals(7, chunk.path("usage").path("completion_tokens").asInt());
            } else if (chunk.path("choices").path(0).hasNonNull("finish_reason")) {
                finish = chunk.path("choices").path(0).path("finish_reason").asText();
            }
        }
        assertEquals("length", finish);
        assertEquals(1, usageChunks);

        // without include_usage there is no usage chunk
        List<String> plain = dataLines(post(gateway("/v1/chat/completions"), body.formatted(model, "true", ""))
                .body());
        assertTrue(plain.stream().filter(d -> !d.equals("[DONE]"))
                .noneMatch(d -> OpenAiJson.parse(d).path("choices").isEmpty()));
        assertEquals(expected, String.join("", contents(plain)));
    }

    @ParameterizedTest
    @CsvSource({"demo-vllm,KV_SCHEDULE_STYLE_CONTEXT_FIRST", "demo-sglang,KV_SCHEDULE_STYLE_CONCURRENT",
        "demo-sglang,KV_SCHEDULE_STYLE_GENERATION_FIRST", "demo-trtllm,KV_SCHEDULE_STYLE_CONTEXT_FIRST",
        "demo-trtllm,KV_SCHEDULE_STYLE_GENERATION_FIRST"})
    void aChatOverGrpcInEachStyleOfEachRouteGivesTheSameContent(String model, KvScheduleStyle style)
            throws Exception {
        String expected = OpenAiJson.parse(post(direct(model), "{\"model\":\"sim-model\",\"messages\":" + MESSAGES
                + ",\"max_tokens\":9}").body()).path("choices").path(0).path("message").path("content").asText();
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            List<GenerateResponse> events = new ArrayList<>();
            InferenceGrpc.newBlockingStub(client.channel()).generate(GenerateRequest.newBuilder()
                    .setRequestId("chat-grpc-" + IDS.incrementAndGet()).setModel(model)
                    .setExtra(struct("{\"messages\":" + MESSAGES + "}"))
                    .setStopping(StoppingOptions.newBuilder().setMaxTokens(9))
                    .setKv(KvOptions.newBuilder().setScheduleStyle(style)).build())
                    .forEachRemaining(events::add);
            StringBuilder text = new StringBuilder();
            events.forEach(e -> text.append(e.getToken().getText()));
            assertEquals(expected, text.toString(), events.toString());
            assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());
        }
        noKvPinned(routes.forModel(model).orElseThrow());
    }

    @Test
    void aGenerateWithNeitherPromptNorMessagesIsRefused() throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> InferenceGrpc
                    .newBlockingStub(client.channel()).generate(GenerateRequest.newBuilder().setRequestId("no-input")
                            .setModel("demo-vllm").build()).forEachRemaining(r -> { }));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"kv_transfer_params", "bootstrap_host", "bootstrap_port", "bootstrap_room",
        "disaggregated_params", "disagg_request_id"})
    void nativeDisaggregationFieldsAreRefusedNeverForwarded(String field) throws Exception {
        Route route = routes.forModel("demo-trtllm").orElseThrow();
        long before = engine(route, true).stat("requests_total") + engine(route, false).stat("requests_total");
        HttpResponse<String> r = post(gateway("/v1/chat/completions"), "{\"model\":\"demo-trtllm\",\"messages\":"
                + MESSAGES + ",\"" + field + "\":{}}");
        assertError(r, 400, "ERROR_CODE_INVALID_ARGUMENT");
        JsonNode error = OpenAiJson.parse(r.body()).path("error");
        assertEquals(field, error.path("param").asText());
        assertEquals("invalid_request_error", error.path("type").asText());
        assertTrue(error.path("message").asText().contains("native disaggregation field"));
        assertEquals(before, engine(route, true).stat("requests_total")
                + engine(route, false).stat("requests_total"), "nothing reached an engine");
    }

    @Test
    void errorsComeInTheOpenAiShapeWithTheirStatus() throws Exception {
        String chat = "/v1/chat/completions";
        assertError(post(gateway(chat), "{\"model\":\"nope\",\"messages\":" + MESSAGES + "}"), 404,
                "ERROR_CODE_MODEL_NOT_FOUND");
        assertError(post(gateway(chat), "{\"model\":\"demo-vllm\""), 400, "ERROR_CODE_INVALID_ARGUMENT");
        HttpResponse<String> noMessages = post(gateway(chat), "{\"model\":\"demo-vllm\",\"prompt\":\"x\"}");
        assertError(noMessages, 400, "ERROR_CODE_INVALID_ARGUMENT");
        assertEquals("messages", OpenAiJson.parse(noMessages.body()).path("error").path("param").asText());
        assertError(post(gateway(chat), "{\"model\":\"demo-vllm\",\"messages\":[]}"), 400,
                "ERROR_CODE_INVALID_ARGUMENT");
        assertError(post(gateway(chat), "{\"model\":\"demo-vllm\",\"messages\":[{\"content\":\"x\"}]}"), 400,
                "ERROR_CODE_INVALID_ARGUMENT");
        assertError(post(gateway(chat), "{\"model\":\"demo-vllm\",\"messages\":" + MESSAGES
                + ",\"top_logprobs\":2}"), 400, "ERROR_CODE_INVALID_ARGUMENT");
        assertError(post(gateway(chat), "{\"model\":\"demo-vllm\",\"messages\":" + MESSAGES
                + ",\"stream_options\":{\"include_usage\":true}}"), 400, "ERROR_CODE_INVALID_ARGUMENT");
        // tool calls cannot be carried by the event stream: refused, never silently lost
        HttpResponse<String> tools = post(gateway(chat), "{\"model\":\"demo-sglang\",\"messages\":" + MESSAGES
                + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{}}}]}");
        assertError(tools, 400, "ERROR_CODE_UNSUPPORTED_FEATURE");
        assertTrue(OpenAiJson.parse(tools.body()).path("error").path("message").asText().contains("tool"));
        // a field the engine family does not carry on a chat is refused by name
        HttpResponse<String> unknown = post(gateway(chat), "{\"model\":\"demo-vllm\",\"messages\":" + MESSAGES
                + ",\"no_such_field\":1}");
        assertError(unknown, 400, "ERROR_CODE_UNSUPPORTED_FEATURE");
        assertTrue(OpenAiJson.parse(unknown.body()).path("error").path("message").asText().contains("no_such_field"));
    }

    @Test
    void chatFieldsTheEngineReadsAreForwarded() throws Exception {
        // chat_template_kwargs and user pass to the engines; max_completion_tokens wins over max_tokens
        HttpResponse<String> r = post(gateway("/v1/chat/completions"), "{\"model\":\"demo-vllm\",\"messages\":"
                + MESSAGES + ",\"chat_template_kwargs\":{\"enable_thinking\":false},\"user\":\"u1\","
                + "\"max_tokens\":20,\"max_completion_tokens\":3,\"logprobs\":true,\"top_logprobs\":2}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode answer = OpenAiJson.parse(r.body());
        assertEquals(3, answer.path("usage").path("completion_tokens").asInt());
        assertTrue(answer.path("choices").path(0).path("logprobs").path("content").isArray());
    }

    /** The phases a client can go away in: while the prefill runs, mid-stream, and waiting for a whole answer. */
    enum Phase { PREFILL, STREAMING, WHOLE }

    @ParameterizedTest
    @CsvSource({"demo-vllm,PREFILL", "demo-vllm,STREAMING", "demo-vllm,WHOLE",
        "demo-sglang,PREFILL", "demo-sglang,STREAMING", "demo-sglang,WHOLE",
        "demo-trtllm,PREFILL", "demo-trtllm,STREAMING", "demo-trtllm,WHOLE"})
    void aClientThatGoesAwayCancelsTheRequestAndLeavesNoKvPinned(String model, Phase phase) throws Exception {
        Route route = routes.forModel(model).orElseThrow();
        SimEngine prefill = engine(route, true);
        SimEngine decode = engine(route, false);
        long prefillsBefore = prefill.stat("requests_total");
        long decodesBefore = decode.stat("requests_total");
        long abortedBefore = decode.stat("requests_aborted");
        long delay = 1500;
        if (phase == Phase.PREFILL) {
            // the prefill engine takes its time: the client leaves while it waits
            prefill.faults().latencyMs(delay);
        }
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);
            String body = "{\"model\":\"" + model + "\",\"messages\":" + MESSAGES + ",\"max_tokens\":300,"
                    + "\"stream\":" + (phase != Phase.WHOLE) + "}";
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            switch (phase) {
                case PREFILL -> await().atMost(Duration.ofSeconds(10))
                        .until(() -> prefill.stat("requests_total") > prefillsBefore);
                case STREAMING -> {
                    BufferedReader reader = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                            StandardCharsets.UTF_8));
                    String line;
                    int contentChunks = 0;
                    while (contentChunks < 2 && (line = reader.readLine()) != null) {
                        if (line.startsWith("data: {") && line.contains("\"content\":\"") && !line.contains(
                                "\"role\"")) {
                            contentChunks++;
                        }
                    }
                    assertEquals(2, contentChunks, "the stream had begun");
                }
                case WHOLE -> await().atMost(Duration.ofSeconds(10))
                        .until(() -> decode.stat("requests_total") > decodesBefore);
                default -> throw new IllegalArgumentException(phase.name());
            }
        }
        if (phase == Phase.PREFILL) {
            Thread.sleep(delay + 500); // past the engine's wait: a leg still open would now pin KV
            assertEquals(0, prefill.stat("kv_blocks_pinned_now"), "the prefill leg was closed with the client");
        } else {
            await().atMost(Duration.ofSeconds(10)).until(() -> decode.stat("requests_aborted") > abortedBefore);
        }
        try {
            noKvPinned(route);
        } finally {
            prefill.faults().clear();
        }
    }

    // ------------------------------------------------------------------ helpers

    private void noKvPinned(Route route) {
        SimEngine prefill = engine(route, true);
        SimEngine decode = engine(route, false);
        await().atMost(Duration.ofSeconds(15)).until(() -> prefill.stat("kv_blocks_pinned_now") == 0
                && decode.stat("kv_blocks_pinned_now") == 0);
    }

    private SimEngine engine(Route route, boolean prefill) {
        return demo.engine((prefill ? route.prefill() : route.decode()).members().get(0)
                .endpoint()).orElseThrow();
    }

    private static void assertError(HttpResponse<String> r, int status, String code) {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode error = OpenAiJson.parse(r.body()).path("error");
        assertEquals(code, error.path("code").asText(), r.body());
        assertTrue(error.path("message").asText().length() > 0);
        assertNotEquals("", error.path("type").asText());
    }

    /** The family's aggregated engine (PD-mode servers need handoff fields): the engine's plain answer. */
    private URI direct(String model) {
        String family = routes.forModel(model).orElseThrow().family();
        SimEngine engine = AGGREGATED.computeIfAbsent(family, f -> Engines.create(Family.parse(f),
                Map.of("role", "both", "model", "sim-model")).startBlocking(vertx));
        return URI.create(engine.baseUrl() + "/v1/chat/completions");
    }

    @AfterAll
    static void stopAggregated() {
        AGGREGATED.values().forEach(SimEngine::stopBlocking);
    }

    private URI gateway(String path) {
        return URI.create(base.toString().replaceAll("/$", "") + path);
    }

    private HttpResponse<String> post(URI uri, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Struct struct(String json) throws Exception {
        Struct.Builder b = Struct.newBuilder();
        JsonFormat.parser().merge(json, b);
        return b.build();
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

    /** The non-empty {@code delta.content} pieces of a chat stream, in order. */
    private static List<String> contents(List<String> data) {
        List<String> out = new ArrayList<>();
        for (String d : data) {
            if (d.equals("[DONE]")) {
                continue;
            }
            for (JsonNode c : OpenAiJson.parse(d).path("choices")) {
                String content = c.path("delta").path("content").asText("");
                if (!content.isEmpty()) {
                    out.add(content);
                }
            }
        }
        return out;
    }
}
