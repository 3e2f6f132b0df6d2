package io.handoff.connector.trtllm;

import com.github.tomakehurst.wiremock.http.Fault;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each kind of worker or network failure becomes, on each leg and in each style. */
class TrtllmFaultsTest {

    private static final Duration WAIT = WireMockRig.WAIT;

    private final WireMockRig rig = new WireMockRig(Map.of("idle-timeout-seconds", "1"));

    @AfterEach
    void stop() {
        rig.close();
    }

    private Handoff plan(ScheduleStyle style) {
        return rig.connector.plan("r1", style, TrtllmLegsTest.REQUEST, rig.prefill, rig.decode);
    }

    private EngineException prefillFails(ScheduleStyle style) {
        return assertThrows(EngineException.class, () -> rig.connector.prefill(plan(style)).await().atMost(WAIT));
    }

    private Handoff ready() {
        Handoff handoff = plan(ScheduleStyle.CONTEXT_FIRST);
        rig.contextAnswers(handoff, "length");
        return assertInstanceOf(PrefillResult.Ready.class, rig.connector.prefill(handoff).await().atMost(WAIT))
                .handoff();
    }

    private void contextFails(int status, String body) {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(status)
                .withHeader("Content-Type", "application/json").withBody(body)));
    }

    private static void check(EngineException e, ErrorCode code, boolean retryable, boolean sent) {
        assertEquals(code, e.code(), e.getMessage());
        assertEquals(retryable, e.retryable(), e.getMessage());
        assertEquals(sent, e.sentToEngine(), e.getMessage());
    }

    @Test
    void contextRefusalsParkNothing() {
        contextFails(400, "{\"object\":\"error\",\"message\":\"disagg_request_id is already in flight\","
                + "\"type\":\"BadRequestError\",\"param\":null,\"code\":400}");
        EngineException e = prefillFails(ScheduleStyle.CONTEXT_FIRST);
        check(e, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false, true);
        assertTrue(e.getMessage().contains("already in flight"), e.getMessage());
        assertTrue(e.held().isEmpty());
        rig.prefillEngine.resetAll();
        contextFails(503, "{}");
        e = prefillFails(ScheduleStyle.CONTEXT_FIRST);
        check(e, ErrorCode.ERROR_CODE_OVERLOADED, true, true);
        assertTrue(e.held().isEmpty());
    }

    @Test
    void contextServerErrorMayHaveParked() {
        contextFails(500, "{\"object\":\"error\",\"message\":\"Internal server error\",\"code\":500}");
        EngineException e = prefillFails(ScheduleStyle.CONTEXT_FIRST);
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
        assertEquals(1, e.held().size());
        assertEquals(WireMockRig.START.plusSeconds(60), e.held().get(0).heldUntil());
    }

    @Test
    void unreachableContextWasNotSent() throws Exception {
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, TrtllmLegsTest.REQUEST,
                closedEndpoint("ctx-gone"), rig.decode);
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(handoff).await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, true, false);
        assertTrue(e.held().isEmpty());
    }

    @Test
    void contextResetAfterTheRequestWasSent() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions"))
                .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        EngineException e = prefillFails(ScheduleStyle.CONTEXT_FIRST);
        assertTrue(e.sentToEngine());
        assertEquals(1, e.held().size(), "the worker may have parked before the connection broke");
    }

    @Test
    void slowContextTimesOut() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withFixedDelay(3000).withBody("{}")));
        EngineException e = prefillFails(ScheduleStyle.GENERATION_FIRST);
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        assertTrue(e.sentToEngine());
        assertEquals(1, e.held().size());
    }

    @Test
    void garbledContextAnswer() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody("{\"choices\":[")));
        EngineException e = prefillFails(ScheduleStyle.CONTEXT_FIRST);
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void truncatedGenerationStreamFailsAfterTheTokensItCarried() {
        Handoff handoff = ready();
        String cut = WireMockRig.GENERATION_STREAM.substring(0,
                WireMockRig.GENERATION_STREAM.indexOf("data: {", 10));
        rig.generationStreams(cut);
        List<GenerateResponse> seen = new CopyOnWriteArrayList<>();
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(handoff)
                .onItem().invoke(seen::add).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
        assertEquals(" it", seen.get(0).getToken().getText());
    }

    @Test
    void transferTimeoutErrorEventInTheStream() {
        Handoff handoff = ready();
        rig.generationStreams("data: {\"object\":\"error\",\"error\":{\"message\":\"Terminating generation request"
                + " due to KV cache transfer timeout\",\"code\":500}}\n\ndata: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
    }

    @Test
    void trtllmStyleErrorEventInTheStream() {
        Handoff handoff = ready();
        rig.generationStreams("data: {\"object\":\"error\",\"message\":\"Terminating generation request 7 due to"
                + " KV cache transfer timeout\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}\n\n"
                + "data: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
        assertTrue(e.getMessage().contains("KV cache transfer timeout"), e.getMessage());
    }

    @Test
    void aStreamWithoutAFinishIsAFailure() {
        Handoff handoff = ready();
        rig.generationStreams("data: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
    }

    @Test
    void aGenerationSilentAfterItsHeadersTimesOut() {
        Handoff handoff = ready();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(WireMockRig.GENERATION_STREAM)
                .withChunkedDribbleDelay(2, 6000)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void aGenerationThatHadTheHandoffIsNeverRetried() {
        Handoff handoff = ready();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(503)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_OVERLOADED, false, true);
    }

    @Test
    void slowGenerationTimesOut() {
        Handoff handoff = ready();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withFixedDelay(3000)
                .withBody(WireMockRig.GENERATION_STREAM)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    @Test
    void anUnreachableGenerationMayBeReplacedWithTheSameId() throws Exception {
        Handoff handoff = ready().withDecode(closedEndpoint("gen-gone"));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, true, false);
        assertTrue(rig.connector.capabilities().decodeRetryElsewhere());
    }

    @Test
    void generationFirstWithoutServerInfoSendsNoGeneration() {
        rig.prefillEngine.stubFor(get(urlEqualTo("/server_info")).willReturn(aResponse().withStatus(200)
                .withBody("{\"disaggregated_params\":{\"ctx_dp_rank\":0,\"ctx_info_endpoint\":[]}}")));
        EngineException e = assertThrows(EngineException.class, () -> rig.connector
                .decode(plan(ScheduleStyle.GENERATION_FIRST)).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, true, false);
        assertEquals(0, rig.decodeEngine.getAllServeEvents().size());
    }

    @Test
    void generationFirstGenerationCutMidStream() {
        rig.serverInfo();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions"))
                .willReturn(aResponse().withFault(Fault.MALFORMED_RESPONSE_CHUNK)));
        EngineException e = assertThrows(EngineException.class, () -> rig.connector
                .decode(plan(ScheduleStyle.GENERATION_FIRST)).collect().asList().await().atMost(WAIT));
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    private static Endpoint closedEndpoint(String name) throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return Endpoint.of(name, "http://127.0.0.1:" + s.getLocalPort());
        }
    }
}
