package io.handoff.gateway.orchestration;

import io.grpc.Status;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.ReferenceAnswers;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static io.handoff.gateway.testing.GenerateEvents.assertOneTerminalError;
import static io.handoff.gateway.testing.GenerateEvents.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bypass by each trigger of the policy: the request goes to a decode endpoint alone (the prefill engine is never
 * contacted), the answer is the engine's, and {@code handoff.generate.bypassed} counts it under its trigger. A
 * request the policy does not bypass is orchestrated as usual.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class GenerateBypassTest extends FleetTestSupport {

    @Inject
    MeterRegistry registry;

    @Inject
    RouteRegistry routes;

    private double bypassed(String route, String trigger) {
        Counter c = registry.find("handoff.generate.bypassed").tags("route", route, "trigger", trigger).counter();
        return c == null ? 0 : c.count();
    }

    private static FamilyEngines vllm() {
        return fleet().vllm();
    }

    /** Runs the request and checks that it went to the decode engine alone, as a bypass under {@code trigger}. */
    private void assertBypassed(GenerateRequest request, String trigger) {
        String route = request.getModel();
        double counted = bypassed(route, trigger);
        long prefillRequests = vllm().prefill().stat("requests_total");
        long decodeRequests = vllm().decode().stat("requests_total");

        List<GenerateResponse> events = run(request);

        assertFinishedOnce(events, request.getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertEquals(ReferenceAnswers.text(vllm(), request.getPrompt(), request.getStopping().getMaxTokens()),
                text(events));
        assertEquals(prefillRequests, vllm().prefill().stat("requests_total"), "the prefill engine was contacted");
        assertEquals(decodeRequests + 1, vllm().decode().stat("requests_total"));
        assertEquals(counted + 1, bypassed(route, trigger), "handoff.generate.bypassed{trigger=" + trigger + "}");
        assertTrue(sessions.of(request.getRequestId()).isEmpty(), "a bypass hands no KV over, so has no session");
        awaitNoKvPinned(vllm());
    }

    /** Runs the request and checks that it was orchestrated: both engines contacted, the session COMPLETE. */
    private void assertOrchestrated(GenerateRequest request) {
        long prefillRequests = vllm().prefill().stat("requests_total");
        List<GenerateResponse> events = run(request);
        assertFinishedOnce(events, request.getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertEquals(prefillRequests + 1, vllm().prefill().stat("requests_total"));
        sessions.awaitOne(request.getRequestId(), "COMPLETE", s -> s.state() == SessionState.COMPLETE);
    }

    private static GenerateRequest withDisposition(GenerateRequest request, KvTransferDisposition disposition) {
        return request.toBuilder().setKv(KvOptions.newBuilder().setTransferDisposition(disposition)).build();
    }

    @Test
    void alwaysBypassesEveryRequest() {
        assertBypassed(request(FleetRoutes.VLLM_BYPASS_ALWAYS, requestId("always"), 10), "always");
        assertBypassed(withDisposition(request(FleetRoutes.VLLM_BYPASS_ALWAYS, requestId("always-asked"), 10),
                KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS), "always");
    }

    @Test
    void explicitBypassesWhenTheRequestAsks() {
        assertBypassed(withDisposition(request(FleetRoutes.VLLM_BYPASS_EXPLICIT, requestId("explicit"), 10),
                KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS), "explicit");
        assertOrchestrated(request(FleetRoutes.VLLM_BYPASS_EXPLICIT, requestId("explicit-not-asked"), 10));
    }

    @Test
    void shortPromptBypassesPromptsUnderTheThreshold() {
        GenerateRequest shortOne = request(FleetRoutes.VLLM_BYPASS_SHORT_PROMPT, requestId("short"), 10).toBuilder()
                .setPrompt("A short prompt").build();
        assertBypassed(shortOne, "short-prompt");
        assertOrchestrated(request(FleetRoutes.VLLM_BYPASS_SHORT_PROMPT, requestId("long"), 10));
        // a request that requires the transfer is orchestrated, however short
        GenerateRequest required = withDisposition(shortOne.toBuilder().setRequestId(requestId("short-required"))
                .build(), KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED);
        assertOrchestrated(required);
    }

    @Test
    void aCancelledBypassStopsItsDecodeAndLeavesNothingBehind() {
        String id = requestId("bypass-cancel");
        long aborts = vllm().decode().stat("requests_aborted");
        long prefillRequests = vllm().prefill().stat("requests_total");
        StreamingGenerate call = start(request(FleetRoutes.VLLM_BYPASS_ALWAYS, id, 400));
        call.awaitTokens(10);
        call.cancel();

        assertEquals(Status.Code.CANCELLED, call.awaitStatus().getStatus().getCode());
        Awaitility.await("the decode engine saw the abort").atMost(StreamingGenerate.WAIT)
                .until(() -> vllm().decode().stat("requests_aborted") > aborts);
        awaitNothingRunning(vllm());
        awaitNoKvPinned(vllm());
        assertEquals(prefillRequests, vllm().prefill().stat("requests_total"));
        assertEquals(0, routes.named(FleetRoutes.VLLM_BYPASS_ALWAYS).orElseThrow().inFlight().get());
        assertFinishedOnce(run(request(FleetRoutes.VLLM_BYPASS_ALWAYS, id, 4)), id, FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void prefillUnavailableBypassesOnceThePrefillPoolIsDown() {
        // the route's breaker opens after one failure: make its only prefill endpoint fail once
        vllm().prefill().faults().errorNext(503, 1);
        String failedId = requestId("prefill-fails");
        List<GenerateResponse> failed = run(request(FleetRoutes.VLLM_BYPASS_PREFILL_UNAVAILABLE, failedId, 10));
        GenerateResponse error = assertOneTerminalError(failed, failedId);
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, error.getError().getCode(), error.toString());
        assertTrue(error.getError().getRetryable(), "an engine that was busy may take the same request later");
        sessions.awaitOne(failedId, "FAILED", s -> s.state() == SessionState.FAILED);

        assertBypassed(request(FleetRoutes.VLLM_BYPASS_PREFILL_UNAVAILABLE, requestId("unavailable"), 10),
                "prefill-unavailable");
    }
}
