package io.handoff.gateway.orchestration;

import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.reaper.SweepReport;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.EngineFleet;
import io.handoff.gateway.testing.FamilyEngines;
import io.handoff.gateway.testing.GenerateSessions;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimulatedFleetResource;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * What every Generate test over the simulated fleet shares: a real gRPC client on the Quarkus test port, the
 * engines, the store, the reaper and the test clock. After each test the fleet is healed (crashed engines
 * restarted, faults cleared).
 */
abstract class FleetTestSupport {

    @TestHTTPResource("/")
    URL base;

    @Inject
    SessionStore store;

    @Inject
    Reaper reaper;

    @Inject
    MutableClock clock;

    @Inject
    MeterRegistry meters;

    GrpcTestClient client;
    GenerateSessions sessions;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
        sessions = new GenerateSessions(store);
    }

    @AfterEach
    void disconnectAndHeal() throws InterruptedException {
        client.close();
        fleet().heal();
    }

    /** Generates refused on a route with a code for a reason, as {@code handoff_generate_refused_total} counts. */
    double refusedCount(String route, ErrorCode code, String reason) {
        Counter counter = meters.find("handoff.generate.refused").tag("route", route).tag("code", code.name())
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    static EngineFleet fleet() {
        return SimulatedFleetResource.fleet();
    }

    static String requestId(String what) {
        return what + "-" + UUID.randomUUID();
    }

    /** A prompt long enough never to count as short (well over 16 tokens), unique to the request. */
    static String prompt(String requestId) {
        return "Handoff gateway test prompt for " + requestId + " about disaggregated prefill and decode";
    }

    static GenerateRequest request(String model, String requestId, int maxTokens) {
        return GenerateRequest.newBuilder().setRequestId(requestId).setModel(model).setPrompt(prompt(requestId))
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    StreamingGenerate start(GenerateRequest request) {
        return StreamingGenerate.start(client.channel(), request);
    }

    List<GenerateResponse> run(GenerateRequest request) {
        return StreamingGenerate.run(client.channel(), request);
    }

    SweepReport sweep() {
        return reaper.sweep().await().atMost(StreamingGenerate.WAIT);
    }

    /**
     * The request's one session once it ended and its cleanup ran, sweeping as the reaper does: what a leg reports
     * as held after the session ended (a prefill cancelled before its answer) is discharged by the reaper.
     */
    Session awaitCleanedUp(String requestId) {
        return Awaitility.await(requestId + ": ended with its cleanup done").atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    sweep();
                    List<Session> found = sessions.of(requestId);
                    return found.size() == 1 ? found.get(0) : null;
                }, s -> s != null && s.isTerminal() && s.pendingObligations().isEmpty());
    }

    static void awaitNoKvPinned(FamilyEngines family) {
        Awaitility.await(family + " pins no KV").atMost(StreamingGenerate.WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> family.pinnedBlocks() == 0);
    }

    static void awaitNothingRunning(FamilyEngines family) {
        Awaitility.await(family + " runs nothing").atMost(StreamingGenerate.WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> family.routed().stream().filter(e -> e.isUp())
                        .allMatch(e -> e.stat("running") == 0 && e.stat("waiting") == 0));
    }
}
