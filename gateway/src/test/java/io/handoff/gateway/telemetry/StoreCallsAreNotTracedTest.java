package io.handoff.gateway.telemetry;

import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.session.SessionStateGauges;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On the Redis store a request, the reaper's sweeps and the state gauges' sampling make only the spans docs/api.md lists
 * ("Tracing"): none for the store's commands. Quarkus traces every Redis command by default, which cost the hot path
 * three CLIENT spans a request, and made each background read of the reaper and the gauges a trace of its own.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class StoreCallsAreNotTracedTest {

    /** Every span name docs/api.md lists that a gRPC Generate and the reaper can make. */
    private static final Set<String> DOCUMENTED = Set.of("openengine.v1.Inference/Generate", "handoff.leg prefill",
            "handoff.leg decode", "handoff.leg bypass", HandoffTracing.SESSION_END_SPAN, "handoff.reap",
            "handoff.cleanup");

    @Inject
    InMemorySpanExporter spans;

    @Inject
    Reaper reaper;

    @Inject
    SessionStateGauges gauges;

    @Test
    void aRequestTheReaperAndTheGaugesMakeOnlyTheDocumentedSpans() throws Exception {
        spans.reset();
        String id = "untraced-store-" + UUID.randomUUID();
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            List<GenerateResponse> events = StreamingGenerate.run(client.channel(), GenerateRequest.newBuilder()
                    .setRequestId(id).setModel(FleetRoutes.VLLM_CONTEXT_FIRST)
                    .setPrompt("A prompt long enough to be prefilled apart, for " + id)
                    .setStopping(StoppingOptions.newBuilder().setMaxTokens(4)).build());
            assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());
        }
        Awaitility.await("the request's session end is traced").atMost(StreamingGenerate.WAIT).until(() -> spans
                .getFinishedSpanItems().stream().anyMatch(s -> s.getName().equals(HandoffTracing.SESSION_END_SPAN)
                        && s.getTraceId().equals(requestSpan(id).getTraceId())));
        for (int i = 0; i < 3; i++) {
            reaper.sweep().await().atMost(StreamingGenerate.WAIT);
        }
        gauges.refresh().await().atMost(StreamingGenerate.WAIT);

        Set<String> names = new TreeSet<>();
        for (SpanData span : spans.getFinishedSpanItems()) {
            names.add(span.getName());
        }
        assertTrue(DOCUMENTED.containsAll(names), "spans beyond docs/api.md's list: " + names);
    }

    private SpanData requestSpan(String requestId) {
        return spans.getFinishedSpanItems().stream()
                .filter(s -> requestId.equals(s.getAttributes().get(HandoffTracing.REQUEST_ID))).findFirst()
                .orElseThrow(() -> new AssertionError("no span yet for " + requestId));
    }
}
