package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Metadata;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.openengine.v1.GenerateRequest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The SPI's forwarding promise: each leg's trace context reaches its engine as gRPC metadata, verbatim. */
class OpenEngineTraceContextTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Map<String, String> PREFILL_CONTEXT = Map.of(
        "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate", "vendor=opaque,other=1");
    private static final Map<String, String> DECODE_CONTEXT = Map.of(
        "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01");
    private static final GenerateRequest REQUEST = GenerateRequest.newBuilder().setPrompt("the quick brown fox")
        .build();

    private RecordingEngines engines;

    @BeforeEach
    void setUp() {
        engines = new RecordingEngines(Map.of());
    }

    @AfterEach
    void tearDown() {
        engines.close();
    }

    private static String header(Metadata metadata, String name) {
        return metadata.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
    }

    @Test
    void eachLegCarriesItsOwnForwardedMetadata() {
        Handoff planned = engines.plan("req-1", REQUEST);

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
            engines.connector.prefill(planned.withForward(PREFILL_CONTEXT)).await().atMost(WAIT));
        engines.connector.decode(ready.handoff().withForward(DECODE_CONTEXT)).collect().asList().await().atMost(WAIT);

        Metadata prefill = engines.prefill.generateMetadata.get(0);
        assertEquals(PREFILL_CONTEXT.get("traceparent"), header(prefill, "traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), header(prefill, "tracestate"));
        Metadata decode = engines.decode.generateMetadata.get(0);
        assertEquals(DECODE_CONTEXT.get("traceparent"), header(decode, "traceparent"));
        assertNull(header(decode, "tracestate"));
    }

    @Test
    void aBypassCarriesItsForwardedMetadata() {
        // the recording engine answers a request without a session as a prefill, which a bypass refuses to relay;
        // what this test is about is what arrived at the engine
        engines.connector.decodeLocally("req-2", REQUEST, engines.decode.endpoint("d"), PREFILL_CONTEXT).collect()
            .asList().onFailure().recoverWithNull().await().atMost(WAIT);

        Metadata local = engines.decode.generateMetadata.get(0);
        assertEquals(PREFILL_CONTEXT.get("traceparent"), header(local, "traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), header(local, "tracestate"));
    }
}
