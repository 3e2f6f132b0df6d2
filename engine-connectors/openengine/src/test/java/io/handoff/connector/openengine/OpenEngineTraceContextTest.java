package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Metadata;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
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

    private RecordingEngine prefillEngine;
    private RecordingEngine decodeEngine;
    private EngineConnector connector;

    @BeforeEach
    void setUp() {
        prefillEngine = new RecordingEngine();
        decodeEngine = new RecordingEngine();
        ConnectorConfig cfg = new ConnectorConfig("route-1", "route-model", List.of(prefillEngine.endpoint("p")),
            List.of(decodeEngine.endpoint("d")), Map.of());
        // this connector brings its own gRPC event loops, so it is lent no Vert.x
        connector = new OpenEngineConnectorService().create(cfg, ConnectorContext.of(null, Clock.systemUTC()));
    }

    @AfterEach
    void tearDown() {
        connector.close();
        prefillEngine.close();
        decodeEngine.close();
    }

    private static String header(Metadata metadata, String name) {
        return metadata.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
    }

    @Test
    void eachLegCarriesItsOwnForwardedMetadata() {
        Handoff planned = connector.plan("req-1", ScheduleStyle.CONTEXT_FIRST, REQUEST, prefillEngine.endpoint("p"),
            decodeEngine.endpoint("d"));

        PrefillResult.Ready ready = assertInstanceOf(PrefillResult.Ready.class,
            connector.prefill(planned.withForward(PREFILL_CONTEXT)).await().atMost(WAIT));
        connector.decode(ready.handoff().withForward(DECODE_CONTEXT)).collect().asList().await().atMost(WAIT);

        Metadata prefill = prefillEngine.generateMetadata.get(0);
        assertEquals(PREFILL_CONTEXT.get("traceparent"), header(prefill, "traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), header(prefill, "tracestate"));
        Metadata decode = decodeEngine.generateMetadata.get(0);
        assertEquals(DECODE_CONTEXT.get("traceparent"), header(decode, "traceparent"));
        assertNull(header(decode, "tracestate"));
    }

    @Test
    void aBypassCarriesItsForwardedMetadata() {
        // the recording engine answers a request without a session as a prefill, which a bypass refuses to relay;
        // what this test is about is what arrived at the engine
        connector.decodeLocally("req-2", REQUEST, decodeEngine.endpoint("d"), PREFILL_CONTEXT).collect().asList()
            .onFailure().recoverWithNull().await().atMost(WAIT);

        Metadata local = decodeEngine.generateMetadata.get(0);
        assertEquals(PREFILL_CONTEXT.get("traceparent"), header(local, "traceparent"));
        assertEquals(PREFILL_CONTEXT.get("tracestate"), header(local, "tracestate"));
    }
}
