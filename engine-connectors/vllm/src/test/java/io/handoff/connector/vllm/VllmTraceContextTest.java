package io.handoff.connector.vllm;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** The SPI's forwarding promise: each leg's trace context reaches its engine as HTTP headers, verbatim. */
class VllmTraceContextTest {

    static final Map<String, String> PREFILL_CONTEXT = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate", "vendor=opaque,other=1");
    static final Map<String, String> DECODE_CONTEXT = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01");

    private WireMockRig rig;

    @BeforeEach
    void start() {
        rig = WireMockRig.fixedHold();
    }

    @AfterEach
    void stop() {
        rig.close();
    }

    @Test
    void eachLegCarriesItsOwnForwardedHeaders() {
        rig.producerAnswers("length", WireMockRig.PRODUCER_PARAMS);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        Handoff planned = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, VllmLegsTest.REQUEST, rig.prefill,
                rig.decode);

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(planned.withForward(PREFILL_CONTEXT)).await().atMost(VllmLegsTest.WAIT));
        rig.connector.decode(ready.handoff().withForward(DECODE_CONTEXT)).collect().asList()
                .await().atMost(VllmLegsTest.WAIT);

        var prefill = WireMockRig.requests(rig.prefillEngine).get(0).getRequest();
        assertEquals(PREFILL_CONTEXT.get("traceparent"), prefill.getHeader("traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), prefill.getHeader("tracestate"));
        assertEquals("r1", prefill.getHeader(VllmEngineConnector.REQUEST_ID_HEADER));
        var decode = WireMockRig.requests(rig.decodeEngine).get(0).getRequest();
        assertEquals(DECODE_CONTEXT.get("traceparent"), decode.getHeader("traceparent"));
        assertEquals(false, decode.containsHeader("tracestate"));
        assertEquals("r1", decode.getHeader(VllmEngineConnector.REQUEST_ID_HEADER));
    }

    @Test
    void aBypassCarriesItsForwardedHeaders() {
        rig.consumerStreams(WireMockRig.DECODE_STREAM);

        rig.connector.decodeLocally("r2", VllmLegsTest.REQUEST, rig.decode, PREFILL_CONTEXT).collect().asList()
                .await().atMost(VllmLegsTest.WAIT);

        var local = WireMockRig.requests(rig.decodeEngine).get(0).getRequest();
        assertEquals(PREFILL_CONTEXT.get("traceparent"), local.getHeader("traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), local.getHeader("tracestate"));
    }
}
