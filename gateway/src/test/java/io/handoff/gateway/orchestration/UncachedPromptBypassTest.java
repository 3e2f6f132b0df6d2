package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.EndpointSource;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.PromptBlocks;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The uncached-prompt bypass on simulated vLLM engines: a long prompt no decode endpoint holds goes through both legs;
 * sent again, or with a short new question after it, it goes to the decode endpoint that took it the first time,
 * alone (no prefill leg), counted under {@code trigger=uncached-prompt}; a different long prompt does not bypass.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class UncachedPromptBypassTest extends FleetTestSupport {

    private static final String ROUTE = FleetRoutes.VLLM_BYPASS_UNCACHED_PROMPT;

    @Inject
    MeterRegistry registry;

    @Inject
    InMemorySpanExporter spans;

    @Inject
    RouteRegistry routes;

    @Inject
    PoolMembership membership;

    private static FamilyEngines vllm() {
        return fleet().vllm();
    }

    /** The route's decode engines, in its configuration's order. */
    private static List<SimEngine> decodes() {
        return List.of(vllm().secondDecode(), vllm().decode());
    }

    private double bypassed() {
        Counter c = registry.find("handoff.generate.bypassed").tags("route", ROUTE, "trigger", "uncached-prompt")
                .counter();
        return c == null ? 0 : c.count();
    }

    /**
     * A document of 800 characters, 200 tokens at the gateway's estimate, far above the route's threshold of 32,
     * whose first characters already differ from any other document's.
     */
    private static String document(String name) {
        String head = name + " " + UUID.randomUUID() + ": ";
        return (head + "a document about disaggregated prefill and decode. ".repeat(20)).substring(0, 800);
    }

    private static GenerateRequest request(String what, String prompt) {
        return request(ROUTE, requestId(what), 10).toBuilder().setPrompt(prompt).build();
    }

    /** The bypass trigger on the request's span, once the exporter has the span; empty for none. */
    private String tracedTrigger(String requestId) {
        SpanData span = Awaitility.await().atMost(StreamingGenerate.WAIT).until(() -> spans.getFinishedSpanItems()
                .stream().filter(s -> requestId.equals(s.getAttributes().get(HandoffTracing.REQUEST_ID))).findFirst(),
                Optional::isPresent).get();
        return Optional.ofNullable(span.getAttributes().get(HandoffTracing.BYPASS_TRIGGER)).orElse("");
    }

    private static long[] decodeRequests() {
        return decodes().stream().mapToLong(e -> e.stat("requests_total")).toArray();
    }

    /** The one decode engine that received a request since {@code before}. */
    private static SimEngine theOneThatRan(long[] before) {
        long[] after = decodeRequests();
        SimEngine ran = null;
        for (int i = 0; i < after.length; i++) {
            if (after[i] != before[i]) {
                assertEquals(before[i] + 1, after[i], decodes().get(i) + " received more than the one request");
                assertTrue(ran == null, "two decode engines received the request");
                ran = decodes().get(i);
            }
        }
        assertTrue(ran != null, "no decode engine received the request");
        return ran;
    }

    private static void assertTheEnginesAnswer(GenerateRequest request, List<GenerateResponse> events) {
        assertFinishedOnce(events, request.getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertEquals(ReferenceAnswers.text(vllm(), request.getPrompt(), request.getStopping().getMaxTokens()),
                text(events));
    }

    /** Runs the request and checks it went through both legs, not bypassed; returns its decode engine. */
    private SimEngine assertOrchestrated(GenerateRequest request) {
        double counted = bypassed();
        long prefillRequests = vllm().prefill().stat("requests_total");
        long[] decodeRequests = decodeRequests();

        assertTheEnginesAnswer(request, run(request));

        assertEquals(prefillRequests + 1, vllm().prefill().stat("requests_total"), "the prefill leg ran");
        sessions.awaitOne(request.getRequestId(), "COMPLETE", s -> s.state() == SessionState.COMPLETE);
        assertEquals(counted, bypassed(), "handoff.generate.bypassed{trigger=uncached-prompt}");
        assertEquals("", tracedTrigger(request.getRequestId()));
        return theOneThatRan(decodeRequests);
    }

    /** Runs the request and checks it was bypassed on {@code holder} under the uncached-prompt trigger. */
    private void assertBypassedOn(SimEngine holder, GenerateRequest request) {
        double counted = bypassed();
        long prefillRequests = vllm().prefill().stat("requests_total");
        long[] decodeRequests = decodeRequests();

        assertTheEnginesAnswer(request, run(request));

        assertEquals(prefillRequests, vllm().prefill().stat("requests_total"), "the prefill engine was contacted");
        assertEquals(holder, theOneThatRan(decodeRequests), "the decode engine that holds the prompt");
        assertEquals(counted + 1, bypassed(), "handoff.generate.bypassed{trigger=uncached-prompt}");
        assertEquals("uncached-prompt", tracedTrigger(request.getRequestId()), "handoff.bypass.trigger");
        assertTrue(sessions.of(request.getRequestId()).isEmpty(), "a bypass hands no KV over, so has no session");
        awaitNoKvPinned(vllm());
    }

    @Test
    void aPromptItsDecodeEndpointHoldsBypassesThePrefillLegAndANewPromptDoesNot() {
        String document = document("manual");
        SimEngine holder = assertOrchestrated(request("uncached-first", document));

        // 12 full blocks of 64 characters held: 8 of the 200 tokens left to prefill
        assertBypassedOn(holder, request("uncached-again", document));
        // and 16 with a short question after the document
        assertBypassedOn(holder, request("uncached-follow-up", document + " And what of a short question?"));

        assertOrchestrated(request("uncached-other", document("report")));
    }

    @Test
    void aRequestThatRequiresTheTransferIsOrchestratedHoweverMuchIsCached() {
        String document = document("handbook");
        SimEngine holder = assertOrchestrated(request("uncached-required-first", document));
        GenerateRequest required = request("uncached-required", document).toBuilder().setKv(KvOptions.newBuilder()
                .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED)).build();
        assertEquals(holder, assertOrchestrated(required), "the decode endpoint holding the prompt is still preferred");
    }

    @Test
    void aDecodeMovedBeforeItReachedItsEngineIsLearnedOnTheEndpointThatRanIt() {
        Route route = routes.named(ROUTE).orElseThrow();
        vllm().secondDecode().crash(-1);
        String firstFailure = route.decode().member("decode-1").orElseThrow().breaker().lastFailure();
        List<String> documents = List.of(document("moved-a"), document("moved-b"));

        // neither engine holds a new prompt, so the pool alternates: one of the two goes to decode-1 first, moves
        for (String document : documents) {
            GenerateRequest request = request("uncached-moved", document);
            assertTheEnginesAnswer(request, run(request));
            sessions.awaitOne(request.getRequestId(), "COMPLETE", s -> s.state() == SessionState.COMPLETE);
            PromptBlocks blocks = PromptBlocks.of(request, route.settings().prefix().blockTokens());
            assertEquals(0, route.decodeCache().cachedTokens("decode-1", blocks),
                    "decode-1 never saw the prompt, yet is estimated to hold it");
            assertTrue(route.decodeCache().cachedTokens("decode-0", blocks) > 0,
                    "decode-0 computed the prompt's KV, yet is not estimated to hold it");
        }
        assertNotEquals(firstFailure, route.decode().member("decode-1").orElseThrow().breaker().lastFailure(),
                "no request was sent to decode-1 first");

        // the bypass follows the estimate: each prompt again goes, alone, to the engine that holds it
        for (String document : documents) {
            assertBypassedOn(vllm().decode(), request("uncached-moved-again", document));
        }
    }

    @Test
    void aDecodeEndpointThatRetiresIsForgottenAndComesBackCold() {
        Route route = routes.named(ROUTE).orElseThrow();
        String document = document("retiring");
        SimEngine holder = assertOrchestrated(request("uncached-retiring-first", document));
        String name = holder == vllm().decode() ? "decode-0" : "decode-1";

        membership.retire(ROUTE, "decode", name);
        try {
            assertEquals(0, route.decodeCache().cachedTokens(name, PromptBlocks.of(request("probe", document),
                    route.settings().prefix().blockTokens())), "the retired endpoint's estimate");
        } finally {
            membership.add(ROUTE, "decode", name, holder.baseUrl(), EndpointSource.STATIC);
        }

        // back under its old name, it is not counted on to hold the prompt: the request goes through both legs
        assertOrchestrated(request("uncached-retiring-back", document));
    }
}
