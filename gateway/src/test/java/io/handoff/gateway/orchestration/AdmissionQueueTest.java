package io.handoff.gateway.orchestration;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.StallingProxy;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static io.handoff.gateway.testing.GenerateEvents.assertFinishedOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route with an admission queue, over real gRPC and the vLLM simulators: a request that finds the route full waits
 * (nothing allocated, no engine reached) and runs when a slot frees, in arrival order; a full queue, a wait past the
 * timeout and a client that goes away while waiting each leave nothing behind. The route's decode endpoint is reached
 * through {@link StallingProxy}, so a test holds the running request for as long as it likes and frees its slot
 * itself, by resuming the proxy or cancelling the request: no test depends on how fast the machine is.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class AdmissionQueueTest extends FleetTestSupport {

    private static final int TOKENS = 8;
    private static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of("handoff-error-code",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("handoff-retryable",
            Metadata.ASCII_STRING_MARSHALLER);

    @Inject
    MeterRegistry registry;

    @Inject
    RouteRegistry routes;

    private StallingProxy decode;

    @BeforeEach
    void holdTheDecodes() {
        decode = fleet().stallingVllmDecode();
        decode.stall();
    }

    @AfterEach
    void releaseTheDecodes() {
        decode.resume();
        for (String route : List.of(FleetRoutes.VLLM_QUEUED, FleetRoutes.VLLM_QUEUED_ENDPOINTS)) {
            awaitDepth(route, 0);
            Route r = routes.named(route).orElseThrow();
            Awaitility.await(route + " gave back every slot").atMost(StreamingGenerate.WAIT)
                    .pollInterval(Duration.ofMillis(20)).until(() -> r.inFlight().get() == 0
                            && r.prefill().members().stream().allMatch(m -> m.outstanding() == 0)
                            && r.decode().members().stream().allMatch(m -> m.outstanding() == 0));
        }
    }

    @Test
    void aRequestWaitsWhileTheRouteIsFullAndRunsWhenTheFirstEnds() {
        double admitted = waits(FleetRoutes.VLLM_QUEUED, "admitted");
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        long sessionsBefore = sessions.count();

        StreamingGenerate second = start(request(FleetRoutes.VLLM_QUEUED, requestId("second"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED, 1);

        assertTrue(sessions.of(second.request().getRequestId()).isEmpty(), "a waiting request has a session");
        assertEquals(sessionsBefore, sessions.count());
        assertFalse(second.ended());
        assertFalse(sessionOf(first).isTerminal(), "the first request is still running");

        decode.resume();

        assertFinishedOnce(first.awaitEnd(), first.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertFinishedOnce(second.awaitEnd(), second.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertEquals(TOKENS, first.tokensReceived());
        assertEquals(TOKENS, second.tokensReceived());
        assertEquals(1, sessions.of(second.request().getRequestId()).size());
        awaitDepth(FleetRoutes.VLLM_QUEUED, 0);
        assertEquals(admitted + 1, waits(FleetRoutes.VLLM_QUEUED, "admitted"));
    }

    @Test
    void aRequestWaitsWhileEveryEndpointIsAtItsLimit() {
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED_ENDPOINTS, "first");
        StreamingGenerate second = start(request(FleetRoutes.VLLM_QUEUED_ENDPOINTS, requestId("second"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED_ENDPOINTS, 1);
        assertTrue(sessions.of(second.request().getRequestId()).isEmpty());

        decode.resume();

        assertFinishedOnce(first.awaitEnd(), first.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertFinishedOnce(second.awaitEnd(), second.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void aFullQueueRefusesAtOnceAndTakesNothing() {
        double full = waits(FleetRoutes.VLLM_QUEUED, "full");
        double refused = refusedCount(FleetRoutes.VLLM_QUEUED, "queue-full");
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        StreamingGenerate[] waiting = new StreamingGenerate[FleetRoutes.QUEUE_MAX_WAITING];
        for (int i = 0; i < waiting.length; i++) {
            waiting[i] = start(request(FleetRoutes.VLLM_QUEUED, requestId("waiting-" + i), TOKENS));
            awaitDepth(FleetRoutes.VLLM_QUEUED, i + 1);
        }
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();
        GenerateRequest oneTooMany = request(FleetRoutes.VLLM_QUEUED, requestId("one-too-many"), TOKENS);

        StatusRuntimeException refusal = start(oneTooMany).awaitStatus();

        assertOverloaded(refusal);
        assertTrue(refusal.getStatus().getDescription().contains("admission queue is full (2 of 2 waiting)"),
                refusal.getStatus().getDescription());
        assertTrue(sessions.of(oneTooMany.getRequestId()).isEmpty());
        assertEquals(sessionsBefore, sessions.count(), "a refused request allocated a session");
        assertEquals(requestsBefore, fleet().requestsTotal(), "a refused request reached an engine");
        assertEquals(FleetRoutes.QUEUE_MAX_WAITING, depth(FleetRoutes.VLLM_QUEUED));
        assertEquals(full + 1, waits(FleetRoutes.VLLM_QUEUED, "full"));
        assertEquals(refused + 1, refusedCount(FleetRoutes.VLLM_QUEUED, "queue-full"), "one refusal, counted once");

        decode.resume();
        first.awaitEnd();
        for (StreamingGenerate w : waiting) {
            assertFinishedOnce(w.awaitEnd(), w.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        }
    }

    @Test
    void aWaitPastTheTimeoutIsRefusedOverloadedSayingHowLongItWaited() {
        double timeouts = waits(FleetRoutes.VLLM_QUEUED, "timeout");
        double refused = refusedCount(FleetRoutes.VLLM_QUEUED, "queue-timeout");
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        long sessionsBefore = sessions.count();
        StreamingGenerate second = start(request(FleetRoutes.VLLM_QUEUED, requestId("timeout"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED, 1);

        // a millisecond short of the timeout, the request still waits: a wait never ends before its deadline
        clock.advance(FleetRoutes.QUEUE_TIMEOUT.minusMillis(1));
        Awaitility.await("two ticks of the queue's timer passed").pollDelay(AdmissionQueue.TICK.multipliedBy(2))
                .atMost(StreamingGenerate.WAIT).until(() -> true);
        assertFalse(second.ended(), "refused before its deadline");
        clock.advance(Duration.ofMillis(1));
        StatusRuntimeException refusal = second.awaitStatus();

        assertOverloaded(refusal);
        String message = refusal.getStatus().getDescription();
        assertTrue(message.contains("waited " + FleetRoutes.QUEUE_TIMEOUT.toMillis() + " ms"), message);
        assertTrue(message.contains("at its limit of 1 requests in flight"), message);
        assertFalse(message.contains("127.0.0.1"), message);
        assertTrue(sessions.of(second.request().getRequestId()).isEmpty());
        assertEquals(sessionsBefore, sessions.count());
        awaitDepth(FleetRoutes.VLLM_QUEUED, 0);
        assertEquals(timeouts + 1, waits(FleetRoutes.VLLM_QUEUED, "timeout"));
        assertEquals(refused + 1, refusedCount(FleetRoutes.VLLM_QUEUED, "queue-timeout"), "counted for its reason");

        decode.resume();
        assertFinishedOnce(first.awaitEnd(), first.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void aClientThatCancelsWhileWaitingLeavesTheQueueAndTakesNothing() {
        double cancelled = waits(FleetRoutes.VLLM_QUEUED, "cancelled");
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();
        StreamingGenerate second = start(request(FleetRoutes.VLLM_QUEUED, requestId("cancel"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED, 1);

        second.cancel();

        assertEquals(Status.Code.CANCELLED, second.awaitStatus().getStatus().getCode());
        awaitDepth(FleetRoutes.VLLM_QUEUED, 0);
        Awaitility.await("the cancelled wait is measured").atMost(StreamingGenerate.WAIT)
                .until(() -> waits(FleetRoutes.VLLM_QUEUED, "cancelled") == cancelled + 1);
        decode.resume();
        assertFinishedOnce(first.awaitEnd(), first.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        awaitCleanedUp(first.request().getRequestId());
        assertTrue(sessions.of(second.request().getRequestId()).isEmpty(), "the cancelled request got a session");
        assertEquals(sessionsBefore, sessions.count());
        assertEquals(requestsBefore, fleet().requestsTotal(), "the cancelled request reached an engine");
        // the slot it never took is free: the next request runs at once
        GenerateRequest after = request(FleetRoutes.VLLM_QUEUED, requestId("after"), TOKENS);
        assertFinishedOnce(run(after), after.getRequestId(), FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void anHttpClientThatClosesItsConnectionWhileWaitingLeavesTheQueue() throws IOException {
        double cancelled = waits(FleetRoutes.VLLM_QUEUED, "cancelled");
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        String id = requestId("http-closed");
        String body = "{\"model\":\"" + FleetRoutes.VLLM_QUEUED + "\",\"prompt\":\"" + prompt(id)
                + "\",\"max_tokens\":" + TOKENS + "}";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), base.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "X-Request-Id: " + id + "\r\nContent-Length: " + bytes.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            awaitDepth(FleetRoutes.VLLM_QUEUED, 1);
        }

        awaitDepth(FleetRoutes.VLLM_QUEUED, 0);
        Awaitility.await("the closed connection's wait is measured").atMost(StreamingGenerate.WAIT)
                .until(() -> waits(FleetRoutes.VLLM_QUEUED, "cancelled") == cancelled + 1);
        assertTrue(sessions.of(id).isEmpty(), "the request whose client went away got a session");
        decode.resume();
        assertFinishedOnce(first.awaitEnd(), first.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        GenerateRequest after = request(FleetRoutes.VLLM_QUEUED, requestId("after"), TOKENS);
        assertFinishedOnce(run(after), after.getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertTrue(sessions.of(id).isEmpty(), "the request whose client went away ran after all");
    }

    @Test
    void waitingRequestsAreAdmittedInTheOrderTheyCame() {
        StreamingGenerate first = startRunning(FleetRoutes.VLLM_QUEUED, "first");
        StreamingGenerate second = start(request(FleetRoutes.VLLM_QUEUED, requestId("second"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED, 1);
        StreamingGenerate third = start(request(FleetRoutes.VLLM_QUEUED, requestId("third"), TOKENS));
        awaitDepth(FleetRoutes.VLLM_QUEUED, 2);

        // the first one's slot frees while the proxy still holds decodes: the one admitted now stays running
        first.cancel();

        awaitDepth(FleetRoutes.VLLM_QUEUED, 1);
        Session admitted = sessions.awaitOne(second.request().getRequestId(), "allocated", s -> true);
        assertFalse(admitted.isTerminal());
        assertTrue(sessions.of(third.request().getRequestId()).isEmpty(), "the third overtook the second");
        assertFalse(third.ended());

        decode.resume();
        assertFinishedOnce(second.awaitEnd(), second.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
        assertFinishedOnce(third.awaitEnd(), third.request().getRequestId(), FinishReason.FINISH_REASON_LENGTH);
    }

    /**
     * Starts a request and waits until it runs: its session allocated and its decode sent to the engine, whose answer
     * the stalled proxy holds back. From then on it reaches no engine again, so the tests can count what others do.
     */
    private StreamingGenerate startRunning(String route, String what) {
        SimEngine decodeEngine = fleet().vllm().decode();
        long decodes = decodeEngine.stat("requests_total");
        StreamingGenerate call = start(request(route, requestId(what), TOKENS));
        sessions.awaitOne(call.request().getRequestId(), "allocated", s -> true);
        Awaitility.await(what + " sent its decode").atMost(StreamingGenerate.WAIT).pollInterval(Duration.ofMillis(10))
                .until(() -> decodeEngine.stat("requests_total") > decodes);
        return call;
    }

    private Session sessionOf(StreamingGenerate call) {
        List<Session> found = sessions.of(call.request().getRequestId());
        assertEquals(1, found.size(), found.toString());
        return found.get(0);
    }

    private static void assertOverloaded(StatusRuntimeException refusal) {
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, refusal.getStatus().getCode(), refusal.getStatus().toString());
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED.name(), refusal.getTrailers().get(ERROR_CODE));
        assertEquals("true", refusal.getTrailers().get(RETRYABLE));
    }

    private void awaitDepth(String route, int expected) {
        Awaitility.await(route + " has " + expected + " waiting").atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(10)).until(() -> depth(route) == expected);
    }

    private int depth(String route) {
        Gauge gauge = registry.find("handoff.admission.queue.depth").tag("route", route).gauge();
        assertTrue(gauge != null, "no depth gauge for route " + route);
        return (int) gauge.value();
    }

    private double waits(String route, String outcome) {
        Timer timer = registry.find("handoff.admission.queue.wait").tag("route", route).tag("outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    private double refusedCount(String route, String reason) {
        return refusedCount(route, ErrorCode.ERROR_CODE_OVERLOADED, reason);
    }
}
