package io.handoff.connector.trtllm;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SPI's forwarding promise: each leg's trace context reaches its worker as HTTP headers, verbatim. */
class TrtllmTraceContextTest {

    static final Map<String, String> CONTEXT_LEG = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate", "vendor=opaque,other=1");
    static final Map<String, String> GENERATION_LEG = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01");

    private WireMockRig rig;

    @AfterEach
    void stop() {
        rig.close();
    }

    @Test
    void eachLegCarriesItsOwnForwardedHeadersBesideTheAuthHeader() {
        rig = new WireMockRig(Map.of("auth-key", "k3y"));
        rig.generationStreams(WireMockRig.GENERATION_STREAM);
        Handoff planned = rig.connector.plan("r1", ScheduleStyle.CONTEXT_FIRST, TrtllmLegsTest.REQUEST, rig.prefill,
                rig.decode);
        rig.contextAnswers(planned, "length");

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
                rig.connector.prefill(planned.withForward(CONTEXT_LEG)).await().atMost(WireMockRig.WAIT));
        rig.connector.decode(ready.handoff().withForward(GENERATION_LEG)).collect().asList()
                .await().atMost(WireMockRig.WAIT);

        var context = WireMockRig.requests(rig.prefillEngine).get(0).getRequest();
        assertEquals(CONTEXT_LEG.get("traceparent"), context.getHeader("traceparent"));
        assertEquals(CONTEXT_LEG.get("tracestate"), context.getHeader("tracestate"));
        var generation = WireMockRig.requests(rig.decodeEngine).get(0).getRequest();
        assertEquals(GENERATION_LEG.get("traceparent"), generation.getHeader("traceparent"));
        assertTrue(generation.containsHeader(DisaggAuthHeader.NAME), "the signed generation keeps its auth header");
    }

    @Test
    void aBypassCarriesItsForwardedHeaders() {
        rig = new WireMockRig();
        rig.generationStreams(WireMockRig.GENERATION_STREAM);

        rig.connector.decodeLocally("r1", TrtllmLegsTest.REQUEST, rig.decode, CONTEXT_LEG).collect().asList()
                .await().atMost(WireMockRig.WAIT);

        var local = WireMockRig.requests(rig.decodeEngine).get(0).getRequest();
        assertEquals(CONTEXT_LEG.get("traceparent"), local.getHeader("traceparent"));
        assertEquals(CONTEXT_LEG.get("tracestate"), local.getHeader("tracestate"));
    }
}
