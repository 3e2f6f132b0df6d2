package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Value;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StoppingOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.handoff.connector.testsupport.ProtoJson.struct;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both legs of a context-first handoff against WireMock producers and consumers: exact wire shapes and outcomes. */
class VllmLegsTest {

    static final Duration WAIT = Duration.ofSeconds(10);
    static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown fox")
            .setSampling(SamplingParams.newBuilder().setTemperature(0))
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16).setMinTokens(4)).build();

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.fixedHold();
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    private Handoff plan(GenerateRequest request) {
        return rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, request, rig.prefill, rig.decode);
    }

    private PrefillResult prefill(GenerateRequest request) {
        return rig.connector.prefill(plan(request)).await().atMost(WAIT);
    }

    @Test
    void contextFirstSendsTheDocumentedBodiesAndHeaders() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        List<GenerateResponse> events = rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);

        var p = WireMockRig.requests(rig.prefillEngine);
        assertEquals(1, p.size());
        assertEquals("r1", p.get(0).getRequest().getHeader("X-Request-Id"));
        assertEquivalent(Json.parse("""
                {"model":"m","prompt":"the quick brown fox","temperature":0.0,"max_tokens":1,"min_tokens":1,
                 "return_token_ids":true,"stream":false,
                 "kv_transfer_params":{"do_remote_decode":true,"do_remote_prefill":false,"remote_engine_id":null,
                   "remote_block_ids":null,"remote_host":null,"remote_port":null}}"""),
                Json.parse(p.get(0).getRequest().getBodyAsString()));

        var d = WireMockRig.requests(rig.decodeEngine);
        assertEquals(1, d.size());
        assertEquals("r1", d.get(0).getRequest().getHeader("X-Request-Id"));
        JsonNode expectedParams = Json.parse(WireMockRig.PRODUCER_PARAMS);
        ((ObjectNode) expectedParams).put("remote_host", "127.0.0.1");
        JsonNode decodeBody = Json.parse(d.get(0).getRequest().getBodyAsString());
        assertEquivalent(Json.parse("""
                {"model":"m","prompt":"the quick brown fox","temperature":0.0,"max_tokens":16,"min_tokens":4,
                 "return_token_ids":true,"stream":true,"stream_options":{"include_usage":true}}""")
                .deepCopy().<ObjectNode>require()
                .set("kv_transfer_params", expectedParams), decodeBody);
        // integers above 2^53 reach the consumer digit for digit
        assertTrue(d.get(0).getRequest().getBodyAsString().contains("[[9007199254740993,58]]"));

        assertEquals(3, events.size());
        assertEquals(" quick", events.get(0).getToken().getText());
        assertEquals(2068, events.get(0).getToken().getTokens(0).getTokenId());
        assertEquals(0, events.get(0).getToken().getOutputIndex());
        assertEquals(" fox", events.get(1).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, events.get(2).getFinished().getReason());
        assertEquals(6, events.get(2).getUsage().getTotalTokens());
        assertFalse(events.get(0).hasUsage() || events.get(1).hasUsage());
        events.forEach(e -> assertEquals("r1", e.getRequestId()));
    }

    /** A chat: no prompt, the messages in extra (as the OpenAI front and a gRPC client send it). */
    static final GenerateRequest CHAT = GenerateRequest.newBuilder()
            .setSampling(SamplingParams.newBuilder().setTemperature(0))
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16).setMinTokens(4))
            .setExtra(struct("{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\","
                    + "\"content\":\"the quick brown fox\"}],\"chat_template_kwargs\":{\"enable_thinking\":false}}"))
            .build();

    @Test
    void aChatGoesToTheChatEndpointOnBothLegsWithTheNativeFields() {
        rig.producerAnswersChat("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(CHAT));
        List<GenerateResponse> events = rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);

        var p = WireMockRig.requests(rig.prefillEngine);
        assertEquals(1, p.size());
        assertEquals("/v1/chat/completions", p.get(0).getRequest().getUrl());
        assertEquals("r1", p.get(0).getRequest().getHeader("X-Request-Id"));
        assertEquivalent(Json.parse("""
                {"model":"m","messages":[{"role":"system","content":"be brief"},
                   {"role":"user","content":"the quick brown fox"}],
                 "chat_template_kwargs":{"enable_thinking":false},
                 "temperature":0.0,"max_tokens":1,"min_tokens":1,"return_token_ids":true,"stream":false,
                 "kv_transfer_params":{"do_remote_decode":true,"do_remote_prefill":false,"remote_engine_id":null,
                   "remote_block_ids":null,"remote_host":null,"remote_port":null}}"""),
                Json.parse(p.get(0).getRequest().getBodyAsString()));

        var d = WireMockRig.requests(rig.decodeEngine);
        assertEquals(1, d.size());
        assertEquals("/v1/chat/completions", d.get(0).getRequest().getUrl());
        JsonNode expectedParams = Json.parse(WireMockRig.PRODUCER_PARAMS);
        ((ObjectNode) expectedParams).put("remote_host", "127.0.0.1");
        assertEquivalent(Json.parse("""
                {"model":"m","messages":[{"role":"system","content":"be brief"},
                   {"role":"user","content":"the quick brown fox"}],
                 "chat_template_kwargs":{"enable_thinking":false},
                 "temperature":0.0,"max_tokens":16,"min_tokens":4,"return_token_ids":true,"stream":true,
                 "stream_options":{"include_usage":true}}""")
                .deepCopy().<ObjectNode>require()
                .set("kv_transfer_params", expectedParams), Json.parse(d.get(0).getRequest().getBodyAsString()));

        assertEquals(3, events.size(), "the role chunk is no event");
        assertEquals(" quick", events.get(0).getToken().getText());
        assertEquals(2068, events.get(0).getToken().getTokens(0).getTokenId());
        assertEquals(" fox", events.get(1).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_LENGTH, events.get(2).getFinished().getReason());
        assertEquals(6, events.get(2).getUsage().getTotalTokens());
    }

    @Test
    void aChatThatStoppedOnItsFirstTokenIsAnsweredByTheProducer() {
        rig.producerAnswersChat("stop", "null");
        GenerateRequest chat = CHAT.toBuilder().setStopping(StoppingOptions.newBuilder().setMaxTokens(16)).build();
        PrefillResult.Finished finished = assertInstanceOf(PrefillResult.Finished.class, prefill(chat));
        assertEquals(" The", finished.events().get(0).getToken().getText());
        assertEquals(FinishReason.FINISH_REASON_STOP, finished.events().get(1).getFinished().getReason());
    }

    @Test
    void aLocalChatIsThePlainStreamedChat() {
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        List<GenerateResponse> events = rig.connector.decodeLocally("r2", CHAT, rig.decode).collect().asList()
                .await().atMost(WAIT);
        assertEquals(3, events.size());
        var d = WireMockRig.requests(rig.decodeEngine).get(0);
        assertEquals("/v1/chat/completions", d.getRequest().getUrl());
        JsonNode body = Json.parse(d.getRequest().getBodyAsString());
        assertTrue(body.path("kv_transfer_params").isMissingNode());
        assertTrue(body.path("prompt").isMissingNode());
        assertEquals(2, body.path("messages").size());
    }

    @Test
    void chatFieldsOutsideTheListAndToolCallsAreRefusedBeforeSending() {
        for (String extra : List.of("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[]}",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"echo\":true}",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"kv_transfer_params\":{}}")) {
            GenerateRequest chat = CHAT.toBuilder().setExtra(struct(extra)).build();
            EngineException e = assertThrows(EngineException.class, () -> plan(chat));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code(), e.getMessage());
        }
        // the chat keys are no completion keys
        GenerateRequest prompted = REQUEST.toBuilder().setExtra(struct("{\"chat_template_kwargs\":{}}")).build();
        assertThrows(EngineException.class, () -> plan(prompted));
        assertEquals(0, rig.sent());
    }

    @Test
    void theParkedPrefillIsRecordedAsHeldUntilTheEnginesTimer() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        HeldKv held = ready.held().get(0);
        assertEquals("prefill@prefill-0", held.id());
        assertEquals(rig.prefill, held.endpoint());
        assertEquals(WireMockRig.START.plusSeconds(480), held.heldUntil());
        assertFalse(held.releasable());
        assertEquals("cmpl-r1-abcd1234", held.handle().get("remote_request_id"));
        assertEquals("eng-1", held.handle().get("remote_engine_id"));
        assertEquals(Map.of("x_request_id", "r1"), ready.handoff().nativeIds());

        DischargeResult discharged = rig.connector.discharge(held).await().atMost(WAIT);
        assertEquals(DischargeResult.Outcome.ENGINE_HOLDS, discharged.outcome());
        assertEquals(held.heldUntil(), discharged.heldUntil());
        rig.connector.abort(ready.handoff(), Leg.DECODE).await().atMost(WAIT);
    }

    @ParameterizedTest
    @CsvSource({"localhost,127.0.0.1", "127.0.0.2,127.0.0.1", "::1,127.0.0.1", "10.1.2.3,10.1.2.3",
        "p0.pool.svc,p0.pool.svc"})
    void aLoopbackSideChannelHostBecomesTheProducersHost(String reported, String sent) {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS.replace("\"localhost\"", "\"" + reported + "\""));
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT);
        assertEquals(sent, WireMockRig.bodies(rig.decodeEngine).get(0).path("kv_transfer_params").path("remote_host")
                .asText());
    }

    @Test
    void noParamsAfterAStopOnTheFirstTokenIsTheWholeAnswer() {
        rig.producerAnswers("stop", "null");
        PrefillResult.Finished finished = assertInstanceOf(PrefillResult.Finished.class,
                prefill(GenerateRequest.newBuilder().setPrompt("hi").build()));
        assertEquals(List.of(), finished.held());
        assertEquals(" The", finished.events().get(0).getToken().getText());
        GenerateResponse last = finished.events().get(finished.events().size() - 1);
        assertEquals(FinishReason.FINISH_REASON_STOP, last.getFinished().getReason());
        assertEquals(5, last.getUsage().getTotalTokens());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void theAnswerIsReadWhateverTheOrderOfItsMembersAndOnlyTheFirstChoiceFinishes() {
        // the parameters first, members the connector does not read (nested, arrays) around them, a second choice
        rig.producerAnswersWith("{\"kv_transfer_params\":null,\"extra\":{\"a\":[1,{\"finish_reason\":\"length\"}]},"
                + "\"choices\":[{\"index\":0,\"text\":\" The\",\"finish_reason\":\"stop\",\"x\":[[]]},"
                + "{\"index\":1,\"text\":\" A\",\"finish_reason\":\"length\"}],\"id\":\"cmpl-r1\"}");
        PrefillResult.Finished finished = assertInstanceOf(PrefillResult.Finished.class,
                prefill(GenerateRequest.newBuilder().setPrompt("hi").build()));
        assertEquals(" The", finished.events().get(0).getToken().getText());

        rig.producerAnswersWith("{\"choices\":[{\"finish_reason\":{\"type\":\"stop\"}}],\"kv_transfer_params\":null}");
        EngineException e = assertThrows(EngineException.class,
                () -> prefill(GenerateRequest.newBuilder().setPrompt("hi").build()));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());

        rig.producerAnswersWith("{\"choices\":[{\"finish_reason\":\"length\"}],\"kv_transfer_params\":"
                + WireMockRig.PRODUCER_PARAMS.replace("\"localhost\"", "\"10.1.2.3\"") + "}");
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        assertEquals("cmpl-r1-abcd1234", ready.held().get(0).handle().get("remote_request_id"));
    }

    @Test
    void anAnswerThatIsNotJsonIsABadAnswer() {
        rig.producerAnswersWith("{\"choices\":[{\"finish_reason\":\"length\"}],\"kv_transfer_params\":{\"remote");
        EngineException e = assertThrows(EngineException.class, () -> prefill(REQUEST));
        assertTrue(e.sentToEngine());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"[1]", "{\"remote_host\":", "\"text\"", "null", ""})
    void transferDataWhoseParamsAreNotAJsonObjectIsRefusedBeforeTheConsumer(String params) {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        Handoff tampered = ready.handoff().withTransferData(ready.handoff().transferData().toBuilder()
                .putFields(KvTransferParams.PARAMS_JSON, Value.newBuilder().setStringValue(params).build()).build());
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(tampered).collect().asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code());
        assertFalse(e.sentToEngine());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void noParamsAfterLengthMeansTheProducerDidNotPark() {
        rig.producerAnswers("length", "null");
        EngineException e = assertThrows(EngineException.class, () -> prefill(REQUEST));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void aStopTheClientsMinTokensForbidsIsNotAnAnswer() {
        // min_tokens is capped at 1 on the prefill leg, so the producer may stop where the client's request would not
        rig.producerAnswers("stop", "null");
        EngineException e = assertThrows(EngineException.class, () -> prefill(REQUEST));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
    }

    @Test
    void paramsWithoutARequiredKeyAreRefusedBeforeTheConsumerSilentlyPrefills() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS.replace("\"remote_request_id\":\"cmpl-r1-abcd1234\",",
                ""));
        EngineException e = assertThrows(EngineException.class, () -> prefill(REQUEST));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertTrue(e.getMessage().contains("remote_request_id"));
    }

    @Test
    void parkedAfterAStopStillDecodesSoTheConsumerFreesTheBlocks() {
        rig.producerAnswers("stop", WireMockRig.PRODUCER_PARAMS);
        assertInstanceOf(PrefillResult.Ready.class, prefill(GenerateRequest.newBuilder().setPrompt("hi").build()));
    }

    @Test
    void aDecodeIsNotSentOnceTheHoldMayHaveEnded() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, prefill(REQUEST));
        rig.clock.advance(Duration.ofSeconds(478).plusMillis(1)); // 480 s hold minus the 2 s margin
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, e.code());
        assertFalse(e.sentToEngine());
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void leaseBuildsStopDecodesOneHeartbeatPeriodEarlier() {
        try (WireMockRig lease = new WireMockRig(Map.of("hold-mode", "lease", "lease-seconds", "30"))) {
            lease.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
            lease.consumerStreams(WireMockRig.DECODE_STREAM);
            Handoff handoff = lease.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, REQUEST, lease.prefill,
                    lease.decode);
            PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                    lease.connector.prefill(handoff).await().atMost(WAIT));
            assertEquals(WireMockRig.START.plusSeconds(30), ready.held().get(0).heldUntil());
            lease.clock.advance(Duration.ofSeconds(22)); // 30 s - 5 s heartbeat period - 2 s margin = 23 s
            assertEquals(3, lease.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT).size());
            lease.clock.advance(Duration.ofSeconds(2));
            assertThrows(EngineException.class,
                    () -> lease.connector.decode(ready.handoff()).collect().asList().await().atMost(WAIT));
            assertEquals(1, lease.decodeEngine.getAllServeEvents().size());
        }
    }

    @Test
    void onlyContextFirstIsPlannedAndNothingIsSentOtherwise() {
        for (ScheduleStyle style : List.of(ScheduleStyle.GENERATION_FIRST, ScheduleStyle.CONCURRENT)) {
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.plan("r1", style, REQUEST, rig.prefill, rig.decode));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        }
        assertEquals(0, rig.sent());
    }

    @Test
    void aLocalDecodeIsThePlainStreamedRequest() {
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        GenerateRequest twoOutputs = REQUEST.toBuilder()
                .setSampling(SamplingParams.newBuilder().setNumSequences(2)).build();
        List<GenerateResponse> events = rig.connector.decodeLocally("r2", twoOutputs, rig.decode).collect().asList()
                .await().atMost(WAIT);
        assertEquals(3, events.size());
        var d = WireMockRig.requests(rig.decodeEngine).get(0);
        assertEquals("r2", d.getRequest().getHeader("X-Request-Id"));
        assertEquivalent(Json.parse("""
                {"model":"m","prompt":"the quick brown fox","n":2,"max_tokens":16,"min_tokens":4,
                 "return_token_ids":true,"stream":true,"stream_options":{"include_usage":true}}"""),
                Json.parse(d.getRequest().getBodyAsString()));
        assertEquals(0, rig.prefillEngine.getAllServeEvents().size());
    }

    static void assertEquivalent(JsonNode expected, JsonNode actual) {
        assertTrue(Json.equivalent(expected, actual), "expected " + expected + "\n but was " + actual);
    }
}
