package io.handoff.connector.vllm;

import com.github.tomakehurst.wiremock.http.Fault;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Endpoint;
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
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each kind of engine or network failure becomes, on each leg. */
class VllmFaultsTest {

    private static final Duration WAIT = VllmLegsTest.WAIT;

    private final WireMockRig rig = new WireMockRig(Map.of("hold-mode", "fixed", "idle-timeout-seconds", "1"));

    @AfterEach
    void stop() {
        rig.close();
    }

    private Handoff plan() {
        return rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, VllmLegsTest.REQUEST, rig.prefill, rig.decode);
    }

    private EngineException prefillFails() {
        return assertThrows(EngineException.class, () -> rig.connector.prefill(plan()).await().atMost(WAIT));
    }

    private Handoff ready() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        return assertInstanceOf(PrefillResult.Ready.class, rig.connector.prefill(plan()).await().atMost(WAIT))
                .handoff();
    }

    private void producerFails(int status, String body) {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(status)
                .withHeader("Content-Type", "application/json").withBody(body)));
    }

    private static void check(EngineException e, ErrorCode code, boolean retryable, boolean sent) {
        assertEquals(code, e.code(), e.getMessage());
        assertEquals(retryable, e.retryable(), e.getMessage());
        assertEquals(sent, e.sentToEngine(), e.getMessage());
    }

    @Test
    void producerClientErrorIsInvalidArgument() {
        producerFails(400, "{\"error\":{\"message\":\"min_tokens must be <= max_tokens\",\"code\":400}}");
        EngineException e = prefillFails();
        check(e, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, false, true);
        assertTrue(e.getMessage().contains("min_tokens must be <= max_tokens"));
    }

    @Test
    void producerServerErrors() {
        producerFails(500, "{\"error\":{\"message\":\"Internal server error\"}}");
        check(prefillFails(), ErrorCode.ERROR_CODE_INTERNAL, false, true);
        rig.prefillEngine.resetAll();
        producerFails(503, "{}");
        check(prefillFails(), ErrorCode.ERROR_CODE_OVERLOADED, true, true);
    }

    @Test
    void unreachableProducerWasNotSent() throws Exception {
        Endpoint closed = closedEndpoint("prefill-gone");
        Handoff handoff = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, VllmLegsTest.REQUEST, closed,
                rig.decode);
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.prefill(handoff).await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, true, false);
    }

    @Test
    void producerResetAfterTheRequestWasSent() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions"))
                .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        EngineException e = prefillFails();
        assertTrue(e.sentToEngine());
    }

    @Test
    void slowProducerTimesOut() {
        rig.prefillEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(200)
                .withFixedDelay(3000).withBody("{}")));
        EngineException e = prefillFails();
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        assertTrue(e.sentToEngine());
    }

    @Test
    void truncatedDecodeStreamFailsAfterTheTokensItCarried() {
        Handoff handoff = ready();
        String cut = WireMockRig.DECODE_STREAM.substring(0, WireMockRig.DECODE_STREAM.indexOf("data: {", 10));
        rig.consumerStreams(cut);
        List<GenerateResponse> seen = new CopyOnWriteArrayList<>();
        EngineException e = assertThrows(EngineException.class, () -> rig.connector.decode(handoff)
                .onItem().invoke(seen::add).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
        assertEquals(" quick", seen.get(0).getToken().getText());
    }

    @Test
    void errorEventInTheDecodeStream() {
        Handoff handoff = ready();
        rig.consumerStreams("data: {\"error\":{\"object\":\"error\",\"message\":\"Internal server error\","
                + "\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n");
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, false, true);
    }

    @Test
    void aConsumerThatHadTheParamsIsNeverRetriedWithThem() {
        Handoff handoff = ready();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(503)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        // a 503 is retryable in general, but a vLLM consumer that rejected the request has told the producer to free
        check(e, ErrorCode.ERROR_CODE_OVERLOADED, false, true);
    }

    @Test
    void anUnreachableConsumerMayBeReplacedWithTheSameParams() throws Exception {
        Handoff handoff = ready().withDecode(closedEndpoint("decode-gone"));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        check(e, ErrorCode.ERROR_CODE_INTERNAL, true, false);
        assertTrue(rig.connector.capabilities().decodeRetryElsewhere());
    }

    @Test
    void garbledDecodeStream() {
        Handoff handoff = ready();
        rig.decodeEngine.stubFor(post(urlEqualTo("/v1/completions"))
                .willReturn(aResponse().withFault(Fault.MALFORMED_RESPONSE_CHUNK)));
        EngineException e = assertThrows(EngineException.class,
                () -> rig.connector.decode(handoff).collect().asList().await().atMost(WAIT));
        assertTrue(e.sentToEngine());
        assertFalse(e.retryable());
    }

    private static Endpoint closedEndpoint(String name) throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return Endpoint.of(name, "http://127.0.0.1:" + s.getLocalPort());
        }
    }
}
