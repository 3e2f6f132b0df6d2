package io.handoff.gateway.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.orchestration.LiveRequests;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.GenerateSessions;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.gateway.testing.SimulatedFleetResource;
import io.handoff.gateway.testing.StreamingGenerate;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.handoff.openengine.v1.StoppingOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The graceful stop of a replica (SIGTERM), run as Quarkus' pre-shutdown phase runs it, while short streams and two
 * longer than the grace period (one over gRPC, one over HTTP) run: readiness goes DOWN, new work over gRPC and HTTP is
 * refused DRAINING with words a client may read, the short streams finish, the long ones are aborted with their KV
 * released, and a session the stop does not end (a participant's) is ended by a reaper once its lease runs out. A
 * profile of its own: the stop has no way back, so the application it stopped serves no other test.
 */
@QuarkusTest
@TestProfile(ReplicaStopTest.Profile.class)
class ReplicaStopTest {

    /** The simulated fleet with a grace period the short streams fit in and the long ones do not. */
    public static class Profile extends SimulatedFleetProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = new HashMap<>(super.getConfigOverrides());
            config.put("handoff.stop.grace-period", GRACE.toMillis() + "ms");
            return config;
        }
    }

    static final Duration GRACE = Duration.ofSeconds(5);
    /** About 1.5 s at the simulators' 5 ms a token: running when the stop starts, ended well inside the grace. */
    private static final int SHORT_TOKENS = 300;
    /** The three short gRPC streams, the short HTTP one and the two long ones. */
    private static final int STREAMS = 6;
    /** About 30 s: far longer than the grace (EOS ignored: the simulators end a stream there by 511 tokens). */
    private static final int LONG_TOKENS = 6000;
    /** An IPv4 address, a URL, a host name or a port: none of them is for a client to read. */
    private static final Pattern ADDRESS = Pattern.compile("\\d+\\.\\d+\\.\\d+\\.\\d+|://|localhost|:\\d{2,5}\\b");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URL base;

    @Inject
    ReplicaStop replicaStop;

    @Inject
    LiveRequests live;

    @Inject
    SessionStore store;

    @Inject
    Reaper reaper;

    @Inject
    MutableClock clock;

    @Inject
    MeterRegistry registry;

    private GrpcTestClient client;
    private GenerateSessions sessions;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
        sessions = new GenerateSessions(store);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    @Test
    void aStopFinishesShortStreamsAbortsLongOnesAndRefusesNewWork() throws Exception {
        assertEquals("UP", replicaRunning(), "ready before the stop");
        KvSession participants = allocate();
        List<StreamingGenerate> shortOnes = List.of(
                start(FleetRoutes.VLLM_CONTEXT_FIRST, "short-vllm", SHORT_TOKENS),
                start(FleetRoutes.SGLANG_CONCURRENT, "short-sglang", SHORT_TOKENS),
                start(FleetRoutes.TRTLLM_CONTEXT_FIRST, "short-trtllm", SHORT_TOKENS));
        CompletableFuture<HttpResponse<String>> shortHttp = http.sendAsync(completion(
                FleetRoutes.VLLM_CONTEXT_FIRST, SHORT_TOKENS, true), HttpResponse.BodyHandlers.ofString());
        StreamingGenerate longOne = start(FleetRoutes.VLLM_CONTEXT_FIRST, "long-vllm", LONG_TOKENS);
        CompletableFuture<HttpResponse<String>> longHttp = http.sendAsync(completion(
                FleetRoutes.TRTLLM_CONTEXT_FIRST, LONG_TOKENS, true), HttpResponse.BodyHandlers.ofString());
        shortOnes.forEach(s -> s.awaitTokens(1));
        longOne.awaitTokens(1);
        Awaitility.await("every stream running").atMost(StreamingGenerate.WAIT).pollInterval(Duration.ofMillis(5))
                .until(() -> live.size() == STREAMS);
        shortOnes.forEach(s -> assertFalse(s.ended(), "already over before the stop: " + s.request().getRequestId()));

        double refusedBefore = refusedAsStopping();
        // as Quarkus' pre-shutdown phase calls it on SIGTERM: it returns once what ran has ended or been aborted
        CompletableFuture<Integer> stopping = CompletableFuture.supplyAsync(replicaStop::stop);

        Awaitility.await("readiness DOWN").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> "DOWN".equals(replicaRunning()));
        RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().statusCode(503);

        StatusRuntimeException refused = start(FleetRoutes.VLLM_CONTEXT_FIRST, "after-stop", 4).awaitStatus();
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), refused.getStatus().toString());
        assertEquals("ERROR_CODE_DRAINING", refused.getTrailers().get(Metadata.Key.of("handoff-error-code",
                Metadata.ASCII_STRING_MARSHALLER)));
        assertClientReadable(refused.getStatus().getDescription());

        HttpResponse<String> refusedHttp = http.send(completion(FleetRoutes.VLLM_CONTEXT_FIRST, 4, false),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(503, refusedHttp.statusCode(), refusedHttp.body());
        JsonNode error = JSON.readTree(refusedHttp.body()).path("error");
        assertEquals("ERROR_CODE_DRAINING", error.path("code").asText(), refusedHttp.body());
        assertEquals("service_unavailable_error", error.path("type").asText(), refusedHttp.body());
        assertClientReadable(error.path("message").asText());
        assertEquals(refusedBefore + 2, refusedAsStopping(), "both refusals counted as this replica stopping");

        // a participant's session is not new work: it is still renewed through the stopping replica
        OpenEngineKvGrpc.newBlockingStub(client.channel()).renewKvSession(RenewKvSessionRequest.newBuilder()
                .setSessionId(participants.getRef().getSessionId()).build());

        for (StreamingGenerate s : shortOnes) {
            assertEquals(FinishReason.FINISH_REASON_LENGTH, finished(s.awaitEnd()).getReason(),
                    s.request().getRequestId());
        }
        HttpResponse<String> streamed = shortHttp.get(StreamingGenerate.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(200, streamed.statusCode(), streamed.body());
        assertTrue(streamed.body().contains("\"finish_reason\":\"length\""), streamed.body());
        assertTrue(streamed.body().trim().endsWith("data: [DONE]"), streamed.body());

        GenerationFinished aborted = finished(longOne.awaitEnd());
        assertEquals(FinishReason.FINISH_REASON_CANCELLED, aborted.getReason(), aborted.toString());
        assertEquals(ReplicaStop.REASON, aborted.getMessage());
        assertTrue(longOne.tokensReceived() < LONG_TOKENS, "the long stream was not cut short");
        HttpResponse<String> abortedHttp = longHttp.get(StreamingGenerate.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(200, abortedHttp.statusCode(), abortedHttp.body());
        assertTrue(abortedHttp.body().contains("\"finish_reason\":\"abort\""), tail(abortedHttp.body()));
        assertTrue(abortedHttp.body().trim().endsWith("data: [DONE]"), tail(abortedHttp.body()));
        assertEquals(2, stopping.get(StreamingGenerate.WAIT.toSeconds(), TimeUnit.SECONDS),
                "requests the stop aborted: the two long streams");

        Session longSession = sessions.awaitOne(longOne.request().getRequestId(), "ended with its cleanup done",
                s -> s.isTerminal() && s.pendingObligations().isEmpty());
        assertEquals(SessionState.CANCELLED, longSession.state());
        assertEquals(ReplicaStop.REASON, longSession.terminalReason());
        assertTrue(longSession.obligations().stream().allMatch(o -> o.status() == CleanupObligation.Status.DISCHARGED),
                longSession.obligations().toString());
        assertFalse(longSession.engineMayHoldKv(clock.instant()), longSession.obligations().toString());
        for (StreamingGenerate s : shortOnes) {
            assertEquals(SessionState.COMPLETE, sessions.awaitOne(s.request().getRequestId(), "ended",
                    Session::isTerminal).state());
        }
        Awaitility.await("no KV pinned on the engines").atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(20)).until(() -> SimulatedFleetResource.fleet().pinnedBlocks() == 0);

        // what the stop leaves (the participant's session) has a lease: once it runs out, a reaper ends it
        assertFalse(session(participants).isTerminal());
        clock.advance(Duration.ofHours(2));
        reaper.sweep().await().atMost(StreamingGenerate.WAIT);
        assertEquals(SessionState.EXPIRED, session(participants).state());
    }

    private String replicaRunning() {
        JsonPath health = RestAssured.given().baseUri(base.toString()).get("/q/health/ready").then().extract()
                .jsonPath();
        return health.getString("checks.find { it.name == 'replica-running' }.status");
    }

    /** Refusals counted with the reason a stopping replica gives (not a deployment's drain: the same code). */
    private double refusedAsStopping() {
        return registry.find("handoff.generate.refused").tag("reason", "replica-stopping").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private StreamingGenerate start(String route, String what, int maxTokens) {
        String id = what + "-" + UUID.randomUUID();
        return StreamingGenerate.start(client.channel(), GenerateRequest.newBuilder().setRequestId(id).setModel(route)
                .setPrompt("Replica stop test prompt for " + id + " about disaggregated prefill and decode")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens).setIgnoreEos(true)).build());
    }

    private KvSession allocate() {
        String unique = UUID.randomUUID().toString();
        return OpenEngineKvGrpc.newBlockingStub(client.channel()).allocateKvSession(AllocateKvSessionRequest
                .newBuilder().setRequestId("participant-" + unique).setModel(FleetRoutes.VLLM_CONTEXT_FIRST)
                .setIdempotencyKey("k-" + unique).build());
    }

    private Session session(KvSession allocated) {
        return store.find(allocated.getRef().getSessionId()).await().atMost(StreamingGenerate.WAIT).orElseThrow();
    }

    private HttpRequest completion(String route, int maxTokens, boolean stream) throws IOException {
        String body = JSON.writeValueAsString(Map.of("model", route, "max_tokens", maxTokens, "stream", stream,
                "ignore_eos", true, "prompt", "Replica stop test prompt " + UUID.randomUUID()
                        + " about disaggregated prefill and decode"));
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + base.getPort() + "/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static String tail(String body) {
        return body.substring(Math.max(0, body.length() - 2000));
    }

    private static GenerationFinished finished(List<GenerateResponse> events) {
        return events.stream().filter(GenerateResponse::hasFinished).map(GenerateResponse::getFinished).findFirst()
                .orElseThrow(() -> new AssertionError("no end of its own: " + events));
    }

    /**
     * Says why and what to do, and names no address of the gateway or an engine: none left, and none the last guard
     * ({@link ClientText}) had to take out, since the refusal's own words have no address to name.
     */
    private static void assertClientReadable(String message) {
        assertTrue(message.contains("this replica is stopping"), message);
        assertFalse(ADDRESS.matcher(message).find(), "an address in: " + message);
        assertFalse(message.contains(ClientText.ADDRESS), "an address taken out of: " + message);
    }
}
