package io.handoff.gateway.telemetry;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.handoff.gateway.demo.DemoFleet;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trace of a Generate on the embedded demo fleet, read from an in-memory exporter: the gRPC server span with
 * Handoff's attributes and session events, one CLIENT span per leg under it, the context the engines receive, the
 * client's own trace continued, a failing leg in error, and the cleanup linked back to the request.
 */
@QuarkusTest
class GenerateTracingTest {

    private static final String CLIENT_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final String CLIENT_SPAN_ID = "b7ad6b7169203331";

    @TestHTTPResource("/")
    URL base;

    @Inject
    InMemorySpanExporter spans;

    @Inject
    RouteRegistry routes;

    @Inject
    DemoFleet demo;

    @BeforeEach
    void forgetEarlierSpans() {
        spans.reset();
    }

    private List<GenerateResponse> generate(String requestId, String model, Metadata headers) throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            var inference = InferenceGrpc.newBlockingStub(client.channel());
            if (headers != null) {
                inference = inference.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            }
            List<GenerateResponse> events = new ArrayList<>();
            inference.generate(GenerateRequest.newBuilder().setRequestId(requestId).setModel(model)
                    .setPrompt("The quick brown fox").setStopping(StoppingOptions.newBuilder().setMaxTokens(4))
                    .build()).forEachRemaining(events::add);
            return events;
        }
    }

    /** The request's server span, once the exporter has it. */
    private SpanData requestSpan(String requestId) {
        return Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> spans.getFinishedSpanItems().stream()
                .filter(s -> requestId.equals(s.getAttributes().get(HandoffTracing.REQUEST_ID))).findFirst(),
                Optional::isPresent).get();
    }

    private List<SpanData> childrenOf(SpanData parent) {
        return spans.getFinishedSpanItems().stream()
                .filter(s -> s.getParentSpanId().equals(parent.getSpanId())
                        && s.getTraceId().equals(parent.getTraceId()))
                .sorted((a, b) -> Long.compare(a.getStartEpochNanos(), b.getStartEpochNanos()))
                .toList();
    }

    private List<SpanData> legsOf(SpanData request, int expected) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> childrenOf(request).stream()
                .filter(s -> s.getName().startsWith("handoff.leg ")).count() >= expected);
        return childrenOf(request).stream().filter(s -> s.getName().startsWith("handoff.leg ")).toList();
    }

    @Test
    void aContextFirstGenerateIsOneServerSpanWithTwoLegSpansAndTheSessionLifecycleAsEvents() throws Exception {
        List<GenerateResponse> events = generate("trace-cf", "demo-vllm", null);
        assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());

        SpanData request = requestSpan("trace-cf");
        assertEquals(SpanKind.SERVER, request.getKind());
        assertEquals("openengine.v1.Inference/Generate", request.getName());
        Attributes a = request.getAttributes();
        assertEquals("demo-vllm", a.get(HandoffTracing.ROUTE));
        assertEquals("vllm", a.get(HandoffTracing.FAMILY));
        assertEquals("context-first", a.get(HandoffTracing.STYLE));
        assertEquals("complete", a.get(HandoffTracing.OUTCOME));
        String sessionId = a.get(HandoffTracing.SESSION_ID);
        assertTrue(sessionId != null && !sessionId.isEmpty(), a.toString());

        // the client's stream completes before the session's end is written: that write, and its event, are a span
        // of their own under the request's, which has ended by then
        assertEquals(List.of("session.allocated", "session.ready", "session.attached"),
                request.getEvents().stream().map(EventData::getName).toList());
        SpanData end = Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> childrenOf(request).stream()
                .filter(s -> s.getName().equals(HandoffTracing.SESSION_END_SPAN)).toList(), found -> !found.isEmpty())
                .get(0);
        assertEquals(SpanKind.INTERNAL, end.getKind());
        assertEquals(StatusCode.UNSET, end.getStatus().getStatusCode());
        assertEquals(sessionId, end.getAttributes().get(HandoffTracing.SESSION_ID));
        assertEquals("demo-vllm", end.getAttributes().get(HandoffTracing.ROUTE));
        assertEquals(List.of("session.complete"), end.getEvents().stream().map(EventData::getName).toList());
        List<EventData> lifecycle = new ArrayList<>(request.getEvents());
        lifecycle.addAll(end.getEvents());
        long epoch = 1;
        for (EventData event : lifecycle) {
            Attributes e = event.getAttributes();
            assertEquals(sessionId, e.get(HandoffTracing.SESSION_ID), event.getName());
            assertEquals(epoch++, e.get(HandoffTracing.SESSION_EPOCH), event.getName());
            assertEquals("context-first", e.get(HandoffTracing.STYLE), event.getName());
            assertEquals("REQUIRED", e.get(HandoffTracing.DISPOSITION), event.getName());
            assertEquals("demo-vllm", e.get(HandoffTracing.ROUTE), event.getName());
            assertEquals("vllm", e.get(HandoffTracing.FAMILY), event.getName());
            assertEquals("prefill-0", e.get(HandoffTracing.PREFILL_ENDPOINT), event.getName());
            assertEquals("decode-0", e.get(HandoffTracing.DECODE_ENDPOINT), event.getName());
        }

        List<SpanData> legs = legsOf(request, 2);
        assertEquals(List.of("handoff.leg prefill", "handoff.leg decode"), legs.stream().map(SpanData::getName)
                .toList());
        SpanData prefill = legs.get(0);
        SpanData decode = legs.get(1);
        for (SpanData leg : legs) {
            assertEquals(SpanKind.CLIENT, leg.getKind(), leg.getName());
            assertEquals(StatusCode.UNSET, leg.getStatus().getStatusCode(), leg.getName());
            assertEquals("vllm", leg.getAttributes().get(HandoffTracing.FAMILY), leg.getName());
            assertEquals("demo-vllm", leg.getAttributes().get(HandoffTracing.ROUTE), leg.getName());
        }
        assertEquals("prefill-0", prefill.getAttributes().get(HandoffTracing.ENDPOINT_NAME));
        assertEquals("decode-0", decode.getAttributes().get(HandoffTracing.ENDPOINT_NAME));
        SimEngine prefillEngine = demo.fleet().orElseThrow().get(Family.VLLM, Role.PREFILL);
        assertEquals(prefillEngine.baseUrl(), prefill.getAttributes().get(HandoffTracing.ENDPOINT_URI));
        assertTrue(prefill.getEndEpochNanos() <= decode.getStartEpochNanos(), "context-first: prefill, then decode");
        assertTrue(decode.getEndEpochNanos() <= end.getStartEpochNanos(), "the end follows the decode");

        // the decode pulled the parked KV, so the end wrote it discharged and handed nothing to cleanup (a cleanup's
        // span and its link to the request are checked where cleanup runs: SessionLifecycleContract)
        assertTrue(spans.getFinishedSpanItems().stream().noneMatch(s -> s.getName().equals("handoff.cleanup")
                && sessionId.equals(s.getAttributes().get(HandoffTracing.SESSION_ID))), "a cleanup ran");
    }

    @Test
    void theEnginesReceiveTheirLegsContextInTheRequestsTrace() throws Exception {
        generate("trace-engines", "demo-vllm", null);
        SpanData request = requestSpan("trace-engines");
        for (SpanData leg : legsOf(request, 2)) {
            // the simulated engines run on the gateway's Vert.x, whose tracer turns the traceparent they received
            // into their own server span: it must be a child of the leg span that sent it
            List<SpanData> engineSide = Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> childrenOf(leg), found -> !found.isEmpty());
            assertEquals(SpanKind.SERVER, engineSide.get(0).getKind(), engineSide.toString());
        }
    }

    @Test
    void aClientsTraceparentMakesTheRequestPartOfTheClientsTrace() throws Exception {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
                "00-" + CLIENT_TRACE_ID + "-" + CLIENT_SPAN_ID + "-01");
        generate("trace-client", "demo-vllm", headers);

        SpanData request = requestSpan("trace-client");
        assertEquals(CLIENT_TRACE_ID, request.getTraceId());
        assertEquals(CLIENT_SPAN_ID, request.getParentSpanId());
        for (SpanData leg : legsOf(request, 2)) {
            assertEquals(CLIENT_TRACE_ID, leg.getTraceId(), leg.getName());
        }
    }

    @Test
    void aFailingLegMarksItsSpanAsAnError() throws Exception {
        SimEngine prefillEngine = demo.fleet().orElseThrow().get(Family.VLLM, Role.PREFILL);
        // a refusal by the engine: it says nothing about the endpoint's health, so the breaker stays shut
        prefillEngine.faults().apply(new ObjectMapper().readTree("{\"error_status\":400,\"error_count\":1}"));
        try {
            List<GenerateResponse> events = generate("trace-failing", "demo-vllm", null);
            assertTrue(events.get(events.size() - 1).hasError(), events.toString());
        } finally {
            prefillEngine.faults().clear();
        }

        SpanData request = requestSpan("trace-failing");
        assertEquals("failed", request.getAttributes().get(HandoffTracing.OUTCOME));
        assertEquals(List.of("session.allocated", "session.failed"),
                request.getEvents().stream().map(EventData::getName).toList());
        SpanData prefill = legsOf(request, 1).get(0);
        assertEquals("handoff.leg prefill", prefill.getName());
        assertEquals(StatusCode.ERROR, prefill.getStatus().getStatusCode());
        assertFalse(prefill.getAttributes().get(HandoffTracing.ERROR_TYPE).isEmpty());
        assertTrue(prefill.getEvents().stream().anyMatch(e -> e.getName().equals("exception")));
    }
}
