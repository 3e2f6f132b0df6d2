package io.handoff.gateway.telemetry;

import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.OtlpExportResource;
import io.handoff.gateway.testing.OtlpReceiver;
import io.handoff.gateway.testing.OtlpReceiver.Received;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.SimEngine;
import io.opentelemetry.proto.trace.v1.Span;
import io.quarkus.test.common.http.TestHTTPResource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged gateway given an OTLP endpoint at run time exports each request as one trace: a Generate over gRPC
 * and a streamed completion over HTTP arrive at a real OTLP receiver with their server span, its Handoff attributes
 * and session events, the leg spans under it, the span of the session's end written after the call, and the
 * traceparent each engine received belonging to that trace, under that leg. The per-request log line names the same trace. One subclass per OTLP protocol.
 */
abstract class OtlpExportContract {

    static final Duration WAIT = Duration.ofSeconds(20);
    private static final Pattern TRACE_ID = Pattern.compile("; trace ([0-9a-f]{32})$");

    @TestHTTPResource("/")
    URL base;

    @Test
    void aGenerateArrivesAsOneTraceFromItsServerSpanToTheEngines() throws Exception {
        String requestId = "otlp-generate-" + OtlpExportResource.receiver().protocol().configName();
        List<GenerateResponse> events = generate(requestId, FleetRoutes.VLLM_CONTEXT_FIRST);
        assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());

        Received request = requestSpan(requestId);
        assertEquals("openengine.v1.Inference/Generate", request.name());
        assertEquals(Span.SpanKind.SPAN_KIND_SERVER, request.span().getKind());
        assertEquals(Optional.of(FleetRoutes.VLLM_CONTEXT_FIRST), request.attribute("handoff.route"));
        assertEquals(Optional.of("vllm"), request.attribute("handoff.engine.family"));
        assertEquals(Optional.of("context-first"), request.attribute("handoff.style"));
        assertEquals(Optional.of("complete"), request.attribute("handoff.outcome"));
        String sessionId = request.attribute("handoff.session.id").orElseThrow();
        assertEquals(List.of("session.allocated", "session.ready", "session.attached"),
                request.span().getEventsList().stream().map(Span.Event::getName).toList());
        // the client's stream completed first: the session's end came after the call, under a span of its own
        Received end = sessionEndOf(request);
        assertEquals(List.of("session.complete"), end.span().getEventsList().stream().map(Span.Event::getName)
                .toList());
        assertEquals(Optional.of(FleetRoutes.VLLM_CONTEXT_FIRST), end.attribute("handoff.route"));
        List<Span.Event> sessionEvents = new ArrayList<>(request.span().getEventsList());
        sessionEvents.addAll(end.span().getEventsList());
        long epoch = 1;
        for (Span.Event event : sessionEvents) {
            Received asSpan = new Received(request.resource(), Span.newBuilder()
                    .addAllAttributes(event.getAttributesList()).build());
            assertEquals(Optional.of(sessionId), asSpan.attribute("handoff.session.id"), event.getName());
            assertEquals(Optional.of(Long.toString(epoch++)), asSpan.attribute("handoff.session.epoch"),
                    event.getName());
            assertEquals(Optional.of("prefill-0"), asSpan.attribute("handoff.endpoint.prefill"), event.getName());
            assertEquals(Optional.of("decode-0"), asSpan.attribute("handoff.endpoint.decode"), event.getName());
        }
        assertEquals(Optional.of("handoff-gateway"), request.resourceAttribute("service.name"));

        List<Received> legs = legsOf(request, 2);
        assertEquals(List.of("handoff.leg prefill", "handoff.leg decode"), legs.stream().map(Received::name).toList());
        for (Received leg : legs) {
            assertEquals(Span.SpanKind.SPAN_KIND_CLIENT, leg.span().getKind(), leg.name());
            assertEquals(Optional.of(FleetRoutes.VLLM_CONTEXT_FIRST), leg.attribute("handoff.route"), leg.name());
        }
        assertTrue(legs.get(0).span().getEndTimeUnixNano() <= legs.get(1).span().getStartTimeUnixNano(),
                "context-first: prefill, then decode");
        enginesReceivedTheirLegs(legs, OtlpExportResource.fleet().vllm().prefill(),
                OtlpExportResource.fleet().vllm().decode());
        requestLogNames(requestId, request.traceId());
    }

    @Test
    void aStreamedCompletionArrivesAsOneTraceFromItsServerSpanToTheEngines() throws Exception {
        String requestId = "otlp-completion-" + OtlpExportResource.receiver().protocol().configName();
        HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(base.toString()).resolve("/v1/completions"))
                .header("content-type", "application/json").header("x-request-id", requestId)
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + FleetRoutes.SGLANG_CONCURRENT
                        + "\",\"prompt\":\"Disaggregated serving is\",\"max_tokens\":4,\"stream\":true}"))
                .timeout(WAIT).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), answer.body());
        assertTrue(answer.body().trim().endsWith("data: [DONE]"), answer.body());

        Received request = requestSpan(requestId);
        assertEquals("POST /v1/completions", request.name());
        assertEquals(Span.SpanKind.SPAN_KIND_SERVER, request.span().getKind());
        assertEquals(Optional.of(FleetRoutes.SGLANG_CONCURRENT), request.attribute("handoff.route"));
        assertEquals(Optional.of("concurrent"), request.attribute("handoff.style"));
        assertEquals(Optional.of("complete"), request.attribute("handoff.outcome"));
        // concurrent: both legs start at once on one session, so it never waits READY for a decode to attach
        assertEquals(List.of("session.allocated", "session.attached"),
                request.span().getEventsList().stream().map(Span.Event::getName).toList());
        assertEquals(List.of("session.complete"), sessionEndOf(request).span().getEventsList().stream()
                .map(Span.Event::getName).toList());

        List<Received> legs = legsOf(request, 2);
        assertEquals(List.of("handoff.leg decode", "handoff.leg prefill"),
                legs.stream().map(Received::name).sorted().toList());
        Received prefill = legs.stream().filter(l -> l.name().equals("handoff.leg prefill")).findFirst().orElseThrow();
        Received decode = legs.stream().filter(l -> l.name().equals("handoff.leg decode")).findFirst().orElseThrow();
        enginesReceivedTheirLegs(List.of(prefill, decode), OtlpExportResource.fleet().sglang().prefill(),
                OtlpExportResource.fleet().sglang().decode());
        requestLogNames(requestId, request.traceId());
    }

    /** The trace id the request's log line ends with. */
    static String loggedTraceId(String requestId) {
        String line = Awaitility.await().atMost(WAIT).until(() -> OtlpExportResource.log().lines()
                .filter(l -> l.contains("request " + requestId + " on route")).findFirst(), Optional::isPresent)
                .get();
        Matcher trace = TRACE_ID.matcher(line);
        assertTrue(trace.find(), line);
        return trace.group(1);
    }

    /** A Generate of four tokens over the packaged gateway's gRPC, its events once it ended; held up, it fails at its deadline. */
    static List<GenerateResponse> generate(String requestId, String model) throws Exception {
        try (GrpcTestClient client = new GrpcTestClient(OtlpExportResource.grpcPort())) {
            List<GenerateResponse> events = new ArrayList<>();
            InferenceGrpc.newBlockingStub(client.channel()).withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                    .generate(GenerateRequest.newBuilder()
                    .setRequestId(requestId).setModel(model).setPrompt("The quick brown fox")
                    .setStopping(StoppingOptions.newBuilder().setMaxTokens(4)).build()).forEachRemaining(events::add);
            return events;
        }
    }

    /** The request's server span, once the receiver has it. */
    static Received requestSpan(String requestId) {
        return Awaitility.await().atMost(WAIT).until(() -> OtlpExportResource.receiver().spans().stream()
                .filter(s -> s.attribute("handoff.request.id").equals(Optional.of(requestId))).findFirst(),
                Optional::isPresent).get();
    }

    /** The span of the session's end written after the call, under the request's span, once the receiver has it. */
    private static Received sessionEndOf(Received request) {
        return Awaitility.await().atMost(WAIT).until(() -> OtlpExportResource.receiver().spans().stream()
                .filter(s -> s.traceId().equals(request.traceId()) && s.parentSpanId().equals(request.spanId())
                        && s.name().equals(HandoffTracing.SESSION_END_SPAN)).findFirst(), Optional::isPresent).get();
    }

    /** The leg spans under the request's span (same trace, parent the request's span), in order of start. */
    private static List<Received> legsOf(Received request, int expected) {
        return Awaitility.await().atMost(WAIT).until(() -> OtlpExportResource.receiver().spans().stream()
                .filter(s -> s.traceId().equals(request.traceId()) && s.parentSpanId().equals(request.spanId())
                        && s.name().startsWith("handoff.leg "))
                .sorted(Comparator.comparingLong(s -> s.span().getStartTimeUnixNano()))
                .toList(), legs -> legs.size() == expected);
    }

    /** Each engine was called in the leg's trace, as a child of the leg's span. */
    private static void enginesReceivedTheirLegs(List<Received> legs, SimEngine prefillEngine, SimEngine decodeEngine) {
        List<SimEngine> engines = List.of(prefillEngine, decodeEngine);
        for (int i = 0; i < 2; i++) {
            Received leg = legs.get(i);
            String expected = "00-" + leg.traceId() + "-" + leg.spanId() + "-01";
            List<String> received = engines.get(i).receivedTraceParents();
            assertTrue(received.contains(expected), leg.name() + ": " + expected + " not among " + received);
        }
    }

    /** The per-request log line ends with the request's trace id. */
    private static void requestLogNames(String requestId, String traceId) {
        assertEquals(traceId, loggedTraceId(requestId));
        assertFalse(OtlpExportResource.log().contains("Failed to export"), OtlpExportResource.log());
    }
}
