package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GuidedDecoding;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StoppingOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.handoff.connector.testsupport.ProtoJson.struct;
import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both legs against WireMock: exact bodies and headers per style, answers, faults, aborts, discharge, probe. */
class SglangLegsTest {

    private static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown")
            .setSampling(SamplingParams.newBuilder().setTemperature(0.5f))
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16)).build();

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.standard();
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    private Handoff plan(ScheduleStyle style) {
        return rig.connector.plan("req-1", style, REQUEST, rig.prefill, rig.decode);
    }

    private static Throwable cause(Throwable t) {
        return t instanceof ExecutionException e ? e.getCause() : t;
    }

    @ParameterizedTest
    @EnumSource(value = ScheduleStyle.class, names = {"CONCURRENT", "GENERATION_FIRST"})
    void bothLegsCarryTheSameRequestAndBootstrapFields(ScheduleStyle style) throws Exception {
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        Handoff handoff = plan(style);
        WireMockRig.Run run = rig.run(handoff);
        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class, run.prefillResult());
        assertTrue(ready.held().isEmpty(), "the prefill answers after the transfer: it holds nothing");
        run.events();

        SglangIds ids = SglangIds.of(handoff);
        String common = "\"model\":\"m\",\"prompt\":\"the quick brown\",\"temperature\":0.5,\"max_tokens\":16,"
                + "\"bootstrap_host\":\"127.0.0.1\",\"bootstrap_port\":9100,\"bootstrap_room\":" + ids.room();
        JsonNode expectedPrefill = Json.parse("{" + common + ",\"rid\":\"" + ids.prefillRid() + "\",\"stream\":false}");
        JsonNode expectedDecode = Json.parse("{" + common + ",\"rid\":\"" + ids.decodeRid()
                + "\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertTrue(Json.equivalent(expectedPrefill, WireMockRig.bodies(rig.prefillEngine, "/v1/completions").get(0)),
                WireMockRig.bodies(rig.prefillEngine, "/v1/completions").get(0).toString());
        assertTrue(Json.equivalent(expectedDecode, WireMockRig.bodies(rig.decodeEngine, "/v1/completions").get(0)),
                WireMockRig.bodies(rig.decodeEngine, "/v1/completions").get(0).toString());

        ServeEvent p = WireMockRig.requests(rig.prefillEngine).get(0);
        ServeEvent d = WireMockRig.requests(rig.decodeEngine).get(0);
        assertEquals("application/json", p.getRequest().getHeader("Content-Type"));
        assertEquals("application/json", p.getRequest().getHeader("Accept"));
        assertEquals("application/json", d.getRequest().getHeader("Content-Type"));
        assertEquals("text/event-stream", d.getRequest().getHeader("Accept"));
        assertFalse(p.getRequest().containsHeader("X-Request-Id"), "sglang identifies legs by rid, not a header");

        assertEquals(34, ids.prefillRid().length());
        assertEquals(34, ids.decodeRid().length());
        assertEquals(ids.prefillRid().substring(0, 32), ids.decodeRid().substring(0, 32));
        assertTrue(ids.room() > 0);
    }

    static final GenerateRequest CHAT = GenerateRequest.newBuilder()
            .setSampling(SamplingParams.newBuilder().setTemperature(0.5f))
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(16))
            .setExtra(struct("{\"messages\":[{\"role\":\"user\",\"content\":\"the quick brown\"}],"
                    + "\"separate_reasoning\":false}"))
            .build();

    @ParameterizedTest
    @EnumSource(value = ScheduleStyle.class, names = {"CONCURRENT", "GENERATION_FIRST"})
    void aChatGoesToTheChatEndpointOfBothLegsWithTheBootstrapFields(ScheduleStyle style) throws Exception {
        rig.producerAnswersChat(WireMockRig.CHAT_PREFILL_ANSWER);
        rig.consumerStreamsChat(WireMockRig.CHAT_DECODE_STREAM);
        Handoff handoff = rig.connector.plan("req-1", style, CHAT, rig.prefill, rig.decode);
        WireMockRig.Run run = rig.run(handoff);
        assertInstanceOf(PrefillResult.Ready.class, run.prefillResult());
        List<GenerateResponse> events = run.events();

        SglangIds ids = SglangIds.of(handoff);
        String common = "\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"the quick brown\"}],"
                + "\"separate_reasoning\":false,\"temperature\":0.5,\"max_tokens\":16,"
                + "\"bootstrap_host\":\"127.0.0.1\",\"bootstrap_port\":9100,\"bootstrap_room\":" + ids.room();
        JsonNode expectedPrefill = Json.parse("{" + common + ",\"rid\":\"" + ids.prefillRid() + "\",\"stream\":false}");
        JsonNode expectedDecode = Json.parse("{" + common + ",\"rid\":\"" + ids.decodeRid()
                + "\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertEquals(1, WireMockRig.bodies(rig.prefillEngine, "/v1/chat/completions").size());
        assertTrue(Json.equivalent(expectedPrefill, WireMockRig.bodies(rig.prefillEngine, "/v1/chat/completions").get(0)),
                WireMockRig.bodies(rig.prefillEngine, "/v1/chat/completions").get(0).toString());
        assertTrue(Json.equivalent(expectedDecode, WireMockRig.bodies(rig.decodeEngine, "/v1/chat/completions").get(0)),
                WireMockRig.bodies(rig.decodeEngine, "/v1/chat/completions").get(0).toString());

        assertEquals(3, events.size(), "the role chunk is no event");
        assertEquals(" quick", events.get(0).getToken().getText());
        assertEquals(" fox", events.get(1).getToken().getText());
        assertEquals("END", events.get(2).getFinished().getStopMatch().getStopText());
        assertEquals(6, events.get(2).getUsage().getTotalTokens());
    }

    @Test
    void chatToolCallsUnlistedChatFieldsAndAJsonSchemaAreRefusedBeforeSending() {
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]";
        for (String extra : List.of("{" + messages + ",\"tools\":[]}", "{" + messages + ",\"chat_template\":\"t\"}",
                "{" + messages + ",\"bootstrap_room\":5}")) {
            GenerateRequest chat = CHAT.toBuilder().setExtra(struct(extra)).build();
            EngineException e = assertThrows(EngineException.class,
                    () -> rig.connector.plan("req-1", ScheduleStyle.CONCURRENT, chat, rig.prefill, rig.decode));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code(), e.getMessage());
        }
        GenerateRequest schema = CHAT.toBuilder().setGuided(GuidedDecoding.newBuilder()
                .setJsonSchema("{}")).build();
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.plan("req-1", ScheduleStyle.CONCURRENT, schema, rig.prefill, rig.decode));
        assertTrue(e.getMessage().contains("response_format"), e.getMessage());
        assertEquals(0, rig.sent(), "nothing sent");
    }

    @Test
    void theDecodeStreamBecomesEventsWithStopMatchAndUsage() throws Exception {
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        List<GenerateResponse> events = rig.run(plan(ScheduleStyle.CONCURRENT)).events();
        assertEquals(" quick", events.get(0).getToken().getText());
        assertEquals(" fox", events.get(1).getToken().getText());
        GenerateResponse last = events.get(events.size() - 1);
        assertEquals(FinishReason.FINISH_REASON_STOP, last.getFinished().getReason());
        assertEquals("END", last.getFinished().getStopMatch().getStopText(), "matched_stop becomes the stop match");
        assertEquals(6, last.getUsage().getTotalTokens());
    }

    @Test
    void contextFirstAndManySamplesAndBypassAreRefusedBeforeAnythingIsSent() {
        EngineException e = assertThrows(EngineException.class, () -> plan(ScheduleStyle.CONTEXT_FIRST));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        GenerateRequest many = REQUEST.toBuilder().setSampling(SamplingParams.newBuilder().setNumSequences(2)).build();
        e = assertThrows(EngineException.class,
                () -> rig.connector.plan("r", ScheduleStyle.CONCURRENT, many, rig.prefill, rig.decode));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        e = assertThrows(EngineException.class, () -> rig.connector.decodeLocally("r", REQUEST, rig.decode).collect()
                .asList().await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
        assertEquals(0, rig.sent());
    }

    @Test
    void aPrefill5xxFailsWithBothPossibleHolds() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(500)
                .withBody("{\"object\":\"error\",\"message\":\"Request 7 timed out after 300.0s in KVPoll.Bootstrapping\","
                        + "\"type\":\"500\",\"code\":500}")));
        Handoff handoff = plan(ScheduleStyle.CONCURRENT);
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(handoff).await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertFalse(e.retryable());
        assertEquals(2, e.held().size(), "the decode waits for its own timer; the prefill may too");
        HeldKv decodeHold = e.held().get(0);
        assertEquals(rig.decode, decodeHold.endpoint());
        assertEquals(SglangIds.of(handoff).decodeRid(), decodeHold.handle().get("rid"));
        assertTrue(decodeHold.releasable());
        assertEquals(WireMockRig.START.plusSeconds(300), decodeHold.heldUntil());
    }

    @Test
    void a503IsRetryableOverload() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(503)
                .withBody("{\"object\":\"error\",\"message\":\"busy\",\"code\":503}")));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(plan(ScheduleStyle.CONCURRENT)).await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, e.code());
        assertTrue(e.retryable());
    }

    @Test
    void anAbortedPrefillAnswerIsCancelled() {
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER.replace("\"finish_reason\":\"length\"",
                "\"finish_reason\":\"abort\""));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(plan(ScheduleStyle.CONCURRENT)).await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, e.code());
    }

    @Test
    void aConnectionResetOnTheDecodeFails() {
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse()
                .withFault(Fault.CONNECTION_RESET_BY_PEER)));
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(
                plan(ScheduleStyle.CONCURRENT)).collect().asList().await().atMost(WireMockRig.WAIT));
        assertTrue(e.sentToEngine());
        assertEquals(2, e.held().size());
        assertEquals(rig.prefill, e.held().get(0).endpoint(), "the prefill waits for its bootstrap timeout");
    }

    @Test
    void aSlowPrefillTimesOut() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withFixedDelay(3000)
                .withStatus(200).withBody(WireMockRig.PREFILL_ANSWER)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(plan(ScheduleStyle.CONCURRENT)).await().atMost(WireMockRig.WAIT));
        assertTrue(e.sentToEngine());
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
    }

    @Test
    void aTruncatedStreamFailsAfterWhatArrived() {
        rig.consumerStreams(WireMockRig.DECODE_STREAM.substring(0, WireMockRig.DECODE_STREAM.indexOf("data: {\"id\":\"cmpl-x\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" fox\"")));
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(
                plan(ScheduleStyle.CONCURRENT)).collect().asList().await().atMost(WireMockRig.WAIT));
        assertFalse(e.retryable());
        assertTrue(e.getMessage().contains("[DONE]"), e.getMessage());
    }

    @Test
    void anErrorEventInsideA200StreamFails() {
        rig.consumerStreams("data: {\"error\":{\"message\":\"Request 7 timed out after 300.0s in KVPoll.WaitingForInput\","
                + "\"code\":500}}\n\ndata: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(
                plan(ScheduleStyle.CONCURRENT)).collect().asList().await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertFalse(e.retryable());
    }

    @Test
    void aNativeAbortFinishWithAStatusInsideA200StreamFails() {
        rig.consumerStreams("data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":{\"type\":\"abort\","
                + "\"message\":\"Failed to get kvcache from prefill instance, it might be dead\",\"status_code\":500}}]}"
                + "\n\ndata: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(
                plan(ScheduleStyle.CONCURRENT)).collect().asList().await().atMost(WireMockRig.WAIT));
        assertEquals(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, e.code());
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void abortPostsTheLegsRidAndCancelsItsExchange() throws Exception {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withFixedDelay(1500)
                .withStatus(200).withBody(WireMockRig.PREFILL_ANSWER)));
        Handoff handoff = plan(ScheduleStyle.GENERATION_FIRST);
        var prefill = rig.connector.prefill(handoff).subscribeAsCompletionStage();
        Thread.sleep(200);
        rig.connector.abort(handoff, Leg.PREFILL).await().atMost(WireMockRig.WAIT);
        Throwable t = cause(assertThrows(ExecutionException.class, () -> prefill.get(5, TimeUnit.SECONDS)));
        assertEquals(ErrorCode.ERROR_CODE_CANCELLED, assertInstanceOf(EngineException.class, t).code());
        List<JsonNode> aborts = WireMockRig.bodies(rig.prefillEngine, "/abort_request");
        assertEquals(1, aborts.size());
        assertEquals(Json.parse("{\"rid\":\"" + SglangIds.of(handoff).prefillRid() + "\"}"), aborts.get(0));

        rig.connector.abort(handoff, Leg.DECODE).await().atMost(WireMockRig.WAIT);
        assertEquals(Json.parse("{\"rid\":\"" + SglangIds.of(handoff).decodeRid() + "\"}"),
                WireMockRig.bodies(rig.decodeEngine, "/abort_request").get(0));
    }

    @Test
    void dischargeAbortsTheRidAndIsIdempotent() {
        Handoff handoff = plan(ScheduleStyle.CONCURRENT);
        SglangEngineConnector c = (SglangEngineConnector) rig.connector;
        HeldKv held = c.hold(handoff, SglangIds.of(handoff), Leg.PREFILL, WireMockRig.START);
        assertEquals(DischargeResult.released(), c.discharge(held).await().atMost(WireMockRig.WAIT));
        assertEquals(DischargeResult.released(), c.discharge(held).await().atMost(WireMockRig.WAIT));
        assertEquals(2, WireMockRig.bodies(rig.prefillEngine, "/abort_request").size());
        assertFalse(c.rooms().isLive(SglangIds.of(handoff).room()), "a discharged room is no longer reserved");
    }

    @Test
    void aLegsAbortReleasesItsOwnHoldOnly() {
        Handoff handoff = plan(ScheduleStyle.CONCURRENT);
        SglangEngineConnector c = (SglangEngineConnector) rig.connector;
        HeldKv prefillHold = c.hold(handoff, SglangIds.of(handoff), Leg.PREFILL, WireMockRig.START);
        HeldKv decodeHold = c.hold(handoff, SglangIds.of(handoff), Leg.DECODE, WireMockRig.START);
        assertTrue(c.abortReleases(handoff, Leg.PREFILL, prefillHold));
        assertTrue(c.abortReleases(handoff, Leg.DECODE, decodeHold));
        assertFalse(c.abortReleases(handoff, Leg.PREFILL, decodeHold));
        assertFalse(c.abortReleases(handoff, Leg.DECODE, prefillHold));
        // the same rid held on the endpoint the leg left: the abort went elsewhere
        Handoff moved = handoff.withDecode(Endpoint.of("elsewhere", "http://127.0.0.1:1"));
        assertFalse(c.abortReleases(moved, Leg.DECODE, decodeHold));
    }

    @Test
    void dischargeOfAnUnreachableEngineIsRetried() {
        Handoff handoff = plan(ScheduleStyle.CONCURRENT).withDecode(Endpoint.of("gone", "http://127.0.0.1:1"));
        SglangEngineConnector c = (SglangEngineConnector) rig.connector;
        HeldKv held = c.hold(handoff, SglangIds.of(handoff), Leg.DECODE, WireMockRig.START);
        DischargeResult result = c.discharge(held).await().atMost(WireMockRig.WAIT);
        assertEquals(DischargeResult.Outcome.RETRY, result.outcome());
    }

    @Test
    void theRoomIsReleasedWhenBothLegsEnded() throws Exception {
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        Handoff handoff = plan(ScheduleStyle.CONCURRENT);
        SglangEngineConnector c = (SglangEngineConnector) rig.connector;
        assertTrue(c.rooms().isLive(SglangIds.of(handoff).room()));
        WireMockRig.Run run = rig.run(handoff);
        run.prefillResult();
        run.events();
        assertFalse(c.rooms().isLive(SglangIds.of(handoff).room()));
    }

    @Test
    void probeReadsRoleModelContextAndLoads() {
        rig.prefillEngine.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(200)));
        rig.prefillEngine.stubFor(get(urlEqualTo("/server_info")).willReturn(okJson("{\"served_model_name\":\"m\","
                + "\"disaggregation_mode\":\"prefill\",\"context_length\":8192,\"disaggregation_bootstrap_port\":8998}")));
        rig.prefillEngine.stubFor(get(urlEqualTo("/model_info")).willReturn(okJson("{\"model_path\":\"/models/m\"}")));
        rig.prefillEngine.stubFor(get(urlPathEqualTo("/v1/loads")).willReturn(okJson("{\"loads\":[{\"dp_rank\":0,"
                + "\"num_running_reqs\":3,\"num_waiting_reqs\":1,\"token_usage\":0.25,\"disaggregation\":{"
                + "\"prefill_prealloc_queue_reqs\":2,\"prefill_inflight_queue_reqs\":1}}]}")));
        EndpointStatus s = rig.connector.probe(rig.prefill).await().atMost(WireMockRig.WAIT);
        assertTrue(s.healthy());
        assertEquals(EngineRole.ENGINE_ROLE_PREFILL, s.role().orElseThrow());
        assertEquals(List.of("m"), s.models());
        assertEquals(8192, s.maxContextLength().orElseThrow());
        assertEquals(Map.of("running_requests", 3.0, "waiting_requests", 1.0, "kv_usage", 0.25,
                "prefill_prealloc_queue_reqs", 2.0, "prefill_inflight_queue_reqs", 1.0), s.load());

        EndpointStatus down = rig.connector.probe(Endpoint.of("gone", "http://127.0.0.1:1")).await()
                .atMost(WireMockRig.WAIT);
        assertFalse(down.healthy());
        assertNotEquals("", down.detail());
    }
}
