package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.trtllm.DisaggAuth;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.handoff.connector.testsupport.ProtoJson.struct;
import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The legs against WireMock workers: exact bodies and headers of both legs in both styles, and answer parsing. */
class TrtllmLegsTest {

    static final Duration WAIT = WireMockRig.WAIT;
    static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown fox")
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16)).build();

    private WireMockRig rig;

    @AfterEach
    void stop() {
        if (rig != null) {
            rig.close();
        }
    }

    private Handoff plan(ScheduleStyle style) {
        return rig.connector.plan("r1", style, REQUEST, rig.prefill, rig.decode);
    }

    private PrefillResult.Ready contextFirstReady(Handoff handoff) {
        rig.contextAnswers(handoff, "length");
        return assertInstanceOf(PrefillResult.Ready.class, rig.connector.prefill(handoff).await().atMost(WAIT));
    }

    private static void assertJson(String expected, JsonNode actual) {
        assertTrue(Json.equivalent(Json.parse(expected), actual), "expected " + expected + "\n but was " + actual);
    }

    @Test
    void contextFirstBodiesAndHeaders() {
        rig = new WireMockRig();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        Handoff handoff = plan(ScheduleStyle.CONTEXT_FIRST);
        String id = WireMockRig.id(handoff);
        PrefillResult.Ready ready = contextFirstReady(handoff);
        List<GenerateResponse> events = rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);

        assertJson("{\"model\":\"m\",\"prompt\":\"the quick brown fox\",\"max_tokens\":16,\"stream\":false,"
                + "\"disaggregated_params\":{\"request_type\":\"context_only\",\"disagg_request_id\":" + id
                + ",\"schedule_style\":0}}", WireMockRig.completionBodies(rig.prefillEngine).get(0));
        assertJson("{\"model\":\"m\",\"prompt\":[1,405,8784,338],\"max_tokens\":16,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"disaggregated_params\":{"
                + "\"request_type\":\"generation_only\",\"first_gen_tokens\":[433],\"ctx_request_id\":" + id + ","
                + "\"encoded_opaque_state\":\"" + WireMockRig.OPAQUE + "\",\"draft_tokens\":null,"
                + "\"disagg_request_id\":" + id + ",\"ctx_dp_rank\":0,\"ctx_info_endpoint\":null,\"schedule_style\":0,"
                + "\"ctx_usage\":{\"prompt_tokens\":4,\"completion_tokens\":1,\"total_tokens\":5,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":0}}}}", WireMockRig.completionBodies(rig.decodeEngine).get(0));
        // no key on the route: no auth header on either leg
        for (ServeEvent e : WireMockRig.requests(rig.prefillEngine)) {
            assertFalse(e.getRequest().containsHeader(DisaggAuthHeader.NAME));
        }
        assertFalse(WireMockRig.requests(rig.decodeEngine).get(0).getRequest().containsHeader(DisaggAuthHeader.NAME));

        // the stream: deltas, one finish, usage on the last event
        assertEquals(" it is", events.stream().filter(GenerateResponse::hasToken)
                .map(e -> e.getToken().getText()).reduce("", String::concat));
        GenerateResponse last = events.get(events.size() - 1);
        assertEquals(FinishReason.FINISH_REASON_LENGTH, last.getFinished().getReason());
        assertEquals(6, last.getUsage().getTotalTokens());
        assertEquals(1, events.stream().filter(GenerateResponse::hasFinished).count());
        assertEquals("r1", last.getRequestId());
    }

    static final GenerateRequest CHAT = GenerateRequest.newBuilder()
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16))
            .setExtra(struct("{\"messages\":[{\"role\":\"user\",\"content\":\"the quick brown fox\"}],"
                    + "\"chat_template_kwargs\":{\"enable_thinking\":false}}"))
            .build();

    private static final String CHAT_FIELDS = "\"model\":\"m\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"the quick brown fox\"}],\"chat_template_kwargs\":{\"enable_thinking\":false},"
            + "\"max_tokens\":16";

    @Test
    void aContextFirstChatGoesToTheChatEndpointsAndTheGenerationGetsTheContextsTokens() {
        rig = new WireMockRig();
        rig.chatGenerationStreams(WireMockRig.CHAT_GENERATION_STREAM);
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, CHAT, rig.prefill, rig.decode);
        String id = WireMockRig.id(handoff);
        rig.chatContextAnswers(handoff, "length");
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WAIT));
        List<GenerateResponse> events = rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);

        assertEquals(1, WireMockRig.chatBodies(rig.prefillEngine).size());
        assertJson("{" + CHAT_FIELDS + ",\"stream\":false,\"disaggregated_params\":{\"request_type\":"
                + "\"context_only\",\"disagg_request_id\":" + id + ",\"schedule_style\":0}}",
                WireMockRig.chatBodies(rig.prefillEngine).get(0));
        // the messages stay; the context's tokens ride as prompt_token_ids, as trtllm-serve's orchestrator sends them
        assertJson("{" + CHAT_FIELDS + ",\"prompt_token_ids\":[1,32,405,8784,338,2,32,9,7],\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"disaggregated_params\":{"
                + "\"request_type\":\"generation_only\",\"first_gen_tokens\":[433],\"ctx_request_id\":" + id + ","
                + "\"encoded_opaque_state\":\"" + WireMockRig.OPAQUE + "\",\"draft_tokens\":null,"
                + "\"disagg_request_id\":" + id + ",\"ctx_dp_rank\":0,\"ctx_info_endpoint\":null,\"schedule_style\":0,"
                + "\"ctx_usage\":{\"prompt_tokens\":9,\"completion_tokens\":1,\"total_tokens\":10}}}",
                WireMockRig.chatBodies(rig.decodeEngine).get(0));

        assertEquals(" it is", events.stream().filter(GenerateResponse::hasToken)
                .map(e -> e.getToken().getText()).reduce("", String::concat));
        GenerateResponse last = events.get(events.size() - 1);
        assertEquals(FinishReason.FINISH_REASON_LENGTH, last.getFinished().getReason());
        assertEquals(6, last.getUsage().getTotalTokens());
    }

    @Test
    void aGenerationFirstChatIsTemplatedByTheGenerationItself() throws Exception {
        rig = new WireMockRig();
        rig.serverInfo();
        rig.chatGenerationStreams(WireMockRig.CHAT_GENERATION_STREAM);
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.GENERATION_FIRST, CHAT, rig.prefill, rig.decode);
        String id = WireMockRig.id(handoff);
        CompletableFuture<List<GenerateResponse>> decode = rig.connector.decode(handoff).collect().asList()
                .subscribeAsCompletionStage();
        List<GenerateResponse> events = decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        rig.chatContextAnswers(handoff, "length");
        assertInstanceOf(PrefillResult.Ready.class, rig.connector.prefill(handoff).await().atMost(WAIT));

        assertJson("{" + CHAT_FIELDS + ",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                + "\"disaggregated_params\":{\"request_type\":\"generation_only\",\"ctx_request_id\":" + id
                + ",\"disagg_request_id\":" + id + ",\"schedule_style\":1,\"ctx_dp_rank\":0,\"ctx_info_endpoint\":\""
                + WireMockRig.INFO_ENDPOINT + "\"}}", WireMockRig.chatBodies(rig.decodeEngine).get(0));
        assertJson("{" + CHAT_FIELDS + ",\"stream\":false,\"disaggregated_params\":{\"request_type\":"
                + "\"context_only\",\"disagg_request_id\":" + id + ",\"schedule_style\":1}}",
                WireMockRig.chatBodies(rig.prefillEngine).get(0));
        assertEquals(" it is", events.stream().filter(GenerateResponse::hasToken)
                .map(e -> e.getToken().getText()).reduce("", String::concat));
    }

    @Test
    void aChatContextThatFinishedIsTheWholeAnswer() {
        rig = new WireMockRig();
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, CHAT, rig.prefill, rig.decode);
        rig.chatContextAnswers(handoff, "stop");
        PrefillResult.Finished finished = assertInstanceOf(PrefillResult.Finished.class,
                rig.connector.prefill(handoff).await().atMost(WAIT));
        assertEquals(" it", finished.events().get(0).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_STOP, finished.events().get(1).getFinished().getReason());
    }

    @Test
    void aLocalChatAndRefusedChatFields() {
        rig = new WireMockRig();
        rig.chatGenerationStreams(WireMockRig.CHAT_GENERATION_STREAM);
        rig.connector.decodeLocally("r1", CHAT, rig.decode).collect().asList().await().atMost(WAIT);
        assertJson("{" + CHAT_FIELDS + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
                WireMockRig.chatBodies(rig.decodeEngine).get(0));
        rig.decodeEngine.resetRequests();
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]";
        for (String extra : List.of("{" + messages + ",\"tools\":[]}", "{" + messages + ",\"prompt_token_ids\":[1]}",
                "{" + messages + ",\"disaggregated_params\":{}}", "{" + messages + ",\"echo\":true}")) {
            GenerateRequest chat = CHAT.toBuilder().setExtra(struct(extra)).build();
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, chat, rig.prefill, rig.decode));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code(), e.getMessage());
        }
        assertEquals(0, rig.sent());
    }

    @Test
    void contextFirstReadyReportsTheParkedContext() {
        rig = new WireMockRig();
        Handoff handoff = plan(ScheduleStyle.CONTEXT_FIRST);
        PrefillResult.Ready ready = contextFirstReady(handoff);
        HeldKv held = ready.held().get(0);
        assertEquals(1, ready.held().size());
        assertEquals(rig.prefill, held.endpoint());
        assertEquals(WireMockRig.START.plusSeconds(60), held.heldUntil());
        assertFalse(held.releasable());
        assertEquals(WireMockRig.id(handoff), held.handle().get("disagg_request_id"));
        // the context's disaggregated_params ride the handoff verbatim, ids exact beyond 2^53
        JsonNode params = Json.parse(ready.handoff().transferData().getFieldsMap()
                .get(TransferData.PARAMS_JSON).getStringValue());
        assertEquals(WireMockRig.id(handoff), params.get("disagg_request_id").bigIntegerValue().toString());

        DischargeResult first = rig.connector.discharge(held).await().atMost(WAIT);
        assertEquals(DischargeResult.engineHoldsUntil(held.heldUntil()), first);
        assertEquals(first, rig.connector.discharge(held).await().atMost(WAIT));
    }

    @Test
    void aContextThatFinishedEndsTheRequestWithoutAGeneration() {
        rig = new WireMockRig();
        Handoff handoff = plan(ScheduleStyle.CONTEXT_FIRST);
        rig.contextAnswers(handoff, "stop");
        PrefillResult.Finished finished = assertInstanceOf(PrefillResult.Finished.class,
                rig.connector.prefill(handoff).await().atMost(WAIT));
        GenerateResponse last = finished.events().get(finished.events().size() - 1);
        assertEquals(FinishReason.FINISH_REASON_STOP, last.getFinished().getReason());
        assertEquals(5, last.getUsage().getTotalTokens());
        assertEquals(" it", finished.events().get(0).getToken().getText());
        // no release call exists: the context still counts as held until its timer ends
        assertEquals(1, finished.held().size());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void generationFirstSendsTheGenerationFirstWithTheTransceiverEndpoint() throws Exception {
        rig = new WireMockRig();
        rig.serverInfo();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST);
        String id = WireMockRig.id(handoff);
        CompletableFuture<List<GenerateResponse>> decode = rig.connector.decode(handoff).collect().asList()
                .subscribeAsCompletionStage();
        List<GenerateResponse> events = decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        rig.contextAnswers(handoff, "length");
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(handoff).await().atMost(WAIT));
        assertTrue(ready.held().isEmpty(), "the context pushed its KV to the waiting generation");

        assertJson("{\"model\":\"m\",\"prompt\":\"the quick brown fox\",\"max_tokens\":16,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"disaggregated_params\":{"
                + "\"request_type\":\"generation_only\",\"ctx_request_id\":" + id + ",\"disagg_request_id\":" + id
                + ",\"schedule_style\":1,\"ctx_dp_rank\":0,\"ctx_info_endpoint\":\"" + WireMockRig.INFO_ENDPOINT
                + "\"}}", WireMockRig.completionBodies(rig.decodeEngine).get(0));
        assertJson("{\"model\":\"m\",\"prompt\":\"the quick brown fox\",\"max_tokens\":16,\"stream\":false,"
                + "\"disaggregated_params\":{\"request_type\":\"context_only\",\"disagg_request_id\":" + id
                + ",\"schedule_style\":1}}", WireMockRig.completionBodies(rig.prefillEngine).get(0));
        assertTrue(WireMockRig.requests(rig.decodeEngine).get(0).getRequest().getLoggedDate().getTime()
                <= WireMockRig.requests(rig.prefillEngine).get(WireMockRig.requests(rig.prefillEngine).size() - 1).getRequest()
                        .getLoggedDate().getTime());
        assertEquals(" it is", events.stream().filter(GenerateResponse::hasToken)
                .map(e -> e.getToken().getText()).reduce("", String::concat));

        // /server_info is read once per context endpoint
        Handoff second = plan(ScheduleStyle.GENERATION_FIRST);
        rig.connector.decode(second).collect().asList().await().atMost(WAIT);
        rig.prefillEngine.verify(1, getRequestedFor(urlEqualTo("/server_info")));
    }

    @Test
    void theAuthHeaderSignsProtectedFieldsOnly() {
        rig = new WireMockRig(Map.of("auth-key", "k3y"));
        rig.serverInfo();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        PrefillResult.Ready ready = contextFirstReady(plan(ScheduleStyle.CONTEXT_FIRST));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);
        rig.connector.decode(plan(ScheduleStyle.GENERATION_FIRST)).collect().asList().await().atMost(WAIT);

        assertFalse(WireMockRig.requests(rig.prefillEngine).stream().anyMatch(e -> e.getRequest()
                .containsHeader(DisaggAuthHeader.NAME)), "the context leg carries no protected field");
        List<ServeEvent> gens = WireMockRig.requests(rig.decodeEngine);
        assertEquals(2, gens.size());
        for (ServeEvent e : gens) {
            JsonNode dp = Json.parse(e.getRequest().getBodyAsString()).get("disaggregated_params");
            assertEquals(DisaggAuth.sign("k3y", dp), e.getRequest().getHeader(DisaggAuthHeader.NAME));
        }
    }

    @Test
    void aLocalPrefillIsAnAggregatedRequest() {
        rig = new WireMockRig();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        rig.connector.decodeLocally("r1", REQUEST, rig.decode).collect().asList().await().atMost(WAIT);
        assertJson("{\"model\":\"m\",\"prompt\":\"the quick brown fox\",\"max_tokens\":16,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}}", WireMockRig.completionBodies(rig.decodeEngine).get(0));
    }

    @Test
    void aGenerationPastTheContextsHoldIsNotSent() {
        rig = new WireMockRig(Map.of("kv-transfer-timeout-ms", "10000", "decode-margin-ms", "1000"));
        PrefillResult.Ready ready = contextFirstReady(plan(ScheduleStyle.CONTEXT_FIRST));
        rig.clock.advance(Duration.ofMillis(9001));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, e.code());
        assertFalse(e.sentToEngine());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void refusedStylesAndFieldsSendNothing() {
        rig = new WireMockRig(Map.of("schedule-styles", "context-first"));
        for (ScheduleStyle style : List.of(ScheduleStyle.CONCURRENT, ScheduleStyle.GENERATION_FIRST)) {
            EngineException e = assertThrows(EngineException.class, () -> plan(style));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
            assertFalse(e.sentToEngine());
        }
        GenerateRequest injected = REQUEST.toBuilder().setExtra(Struct.newBuilder()
                .putFields("disaggregated_params", Value.newBuilder().setStructValue(
                        Struct.newBuilder().putFields("ctx_info_endpoint",
                                Value.newBuilder().setStringValue("tcp://evil:1").build()))
                        .build())).build();
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, injected, rig.prefill, rig.decode));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        assertThrows(EngineException.class, () -> rig.connector.decodeLocally("r1", injected, rig.decode).collect()
                .asList().await().atMost(WAIT));
        // a handoff of another family carries no context answer: refused before sending
        Handoff foreign = new Handoff("r1", ScheduleStyle.CONTEXT_FIRST, REQUEST, rig.prefill, rig.decode,
                Map.of("disagg_request_id", "1099511627776"), null);
        assertThrows(EngineException.class, () -> rig.connector.decode(foreign).collect().asList().await()
                .atMost(WAIT));
        assertEquals(0, rig.sent());
    }

    @Test
    void contextAnswersThatCannotBeHandedOff() {
        rig = new WireMockRig();
        Handoff handoff = plan(ScheduleStyle.CONTEXT_FIRST);
        String id = WireMockRig.id(handoff);
        String good = WireMockRig.contextAnswer(id, "length", 0);
        JsonNode base = Json.parse(good);
        List<JsonNode> bad = List.of(
                withChoices(base, 2),
                without(base, "disaggregated_params"),
                withParam(base, "disagg_request_id", "1099511627777"),
                withParam(base, "ctx_request_id", null),
                withoutTop(base, "prompt_token_ids"));
        for (JsonNode answer : bad) {
            rig.prefillEngine.resetAll();
            rig.contextAnswers(Json.write(answer));
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.prefill(handoff).await().atMost(WAIT), Json.write(answer));
            assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code(), e.getMessage());
            assertTrue(e.sentToEngine());
            assertFalse(e.retryable());
            assertEquals(1, e.held().size(), "the context may have parked");
        }
    }

    private static JsonNode withChoices(JsonNode answer, int n) {
        var copy = (ObjectNode) answer.deepCopy();
        var choices = copy.putArray("choices");
        for (int i = 0; i < n; i++) {
            choices.add(answer.get("choices").get(0).deepCopy());
        }
        return copy;
    }

    private static JsonNode without(JsonNode answer, String key) {
        var copy = (ObjectNode) answer.deepCopy();
        ((ObjectNode) copy.get("choices").get(0)).remove(key);
        return copy;
    }

    private static JsonNode withoutTop(JsonNode answer, String key) {
        var copy = (ObjectNode) answer.deepCopy();
        copy.remove(key);
        return copy;
    }

    private static JsonNode withParam(JsonNode answer, String key, String value) {
        var copy = (ObjectNode) answer.deepCopy();
        var dp = (ObjectNode) copy.get("choices").get(0)
                .get("disaggregated_params");
        if (value == null) {
            dp.putNull(key);
        } else {
            dp.put(key, new BigInteger(value));
        }
        return copy;
    }

    @Test
    void probeReadsTheFourEndpointsAndCachesTheTransceiver() {
        rig = new WireMockRig();
        rig.prefillEngine.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(200)));
        rig.prefillEngine.stubFor(get(urlEqualTo("/v1/models")).willReturn(aResponse().withStatus(200).withBody(
                "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"owned_by\":\"tensorrt_llm\"}]}")));
        rig.prefillEngine.stubFor(get(urlEqualTo("/prometheus/metrics")).willReturn(aResponse().withStatus(200).withBody(
                "# TYPE trtllm_num_requests_running gauge\ntrtllm_num_requests_running 3.0\n"
                        + "trtllm_kv_cache_utilization 0.25\n")));
        rig.serverInfo();
        EndpointStatus status = rig.connector.probe(rig.prefill).await().atMost(WAIT);
        assertTrue(status.healthy(), status.detail());
        assertEquals(List.of("m"), status.models());
        assertEquals(3.0, status.load().get("running_requests"));
        assertEquals(0.25, status.load().get("kv_usage"));
        assertTrue(status.detail().contains(WireMockRig.INFO_ENDPOINT), status.detail());
        assertNull(status.role().orElse(null));

        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        rig.connector.decode(plan(ScheduleStyle.GENERATION_FIRST)).collect().asList().await().atMost(WAIT);
        rig.prefillEngine.verify(1, getRequestedFor(urlEqualTo("/server_info")));
    }

    @Test
    void probeOfADeadWorker() {
        rig = new WireMockRig();
        rig.prefillEngine.stop();
        EndpointStatus status = rig.connector.probe(rig.prefill).await().atMost(WAIT);
        assertFalse(status.healthy());
    }
}
