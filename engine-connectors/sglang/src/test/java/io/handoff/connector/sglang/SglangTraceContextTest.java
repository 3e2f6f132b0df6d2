package io.handoff.connector.sglang;

import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.StoppingOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The SPI's forwarding promise: each leg's trace context reaches its engine as HTTP headers, verbatim. */
class SglangTraceContextTest {

    static final Map<String, String> PREFILL_CONTEXT = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate", "vendor=opaque,other=1");
    static final Map<String, String> DECODE_CONTEXT = Map.of(
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01",
            "tracestate", "vendor=opaque");
    private static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown")
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

    @Test
    void eachLegCarriesItsOwnForwardedHeaders() throws Exception {
        rig.producerAnswers(WireMockRig.PREFILL_ANSWER);
        rig.consumerStreams(WireMockRig.DECODE_STREAM);
        Handoff planned = rig.connector.plan("req-1", ScheduleStyle.CONCURRENT, REQUEST, rig.prefill, rig.decode);

        // as the gateway runs a concurrent handoff: the decode first, then the prefill, each with its own context
        CompletableFuture<?> decode = rig.connector.decode(planned.withForward(DECODE_CONTEXT)).collect().asList()
                .subscribeAsCompletionStage();
        rig.connector.prefill(planned.withForward(PREFILL_CONTEXT)).await().atMost(WireMockRig.WAIT);
        decode.get(WireMockRig.WAIT.toMillis(), TimeUnit.MILLISECONDS);

        var prefill = WireMockRig.requests(rig.prefillEngine).get(0).getRequest();
        assertEquals(PREFILL_CONTEXT.get("traceparent"), prefill.getHeader("traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), prefill.getHeader("tracestate"));
        var consumer = WireMockRig.requests(rig.decodeEngine).get(0).getRequest();
        assertEquals(DECODE_CONTEXT.get("traceparent"), consumer.getHeader("traceparent"));
        assertEquals(DECODE_CONTEXT.get("tracestate"), consumer.getHeader("tracestate"));
    }
}
