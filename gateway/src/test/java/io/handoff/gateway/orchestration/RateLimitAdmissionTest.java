package io.handoff.gateway.orchestration;

import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.RateLimitedFleetProfile;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.Usage;
import io.handoff.gateway.testing.StreamingGenerate;
import org.awaitility.Awaitility;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tenant at its rate limit, on every front: refused before anything is taken (no session, no engine reached), with
 * the wait until the same request fits, and let in again once the clock has moved that far. Each test starts with
 * the limits empty: it moves the clock an hour first.
 */
@QuarkusTest
@TestProfile(RateLimitedFleetProfile.class)
class RateLimitAdmissionTest extends FleetTestSupport {

    private static final Metadata.Key<String> ERROR_CODE = Metadata.Key.of("handoff-error-code",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("handoff-retryable",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRY_AFTER_MS = Metadata.Key.of("retry-after-ms",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<com.google.rpc.Status> DETAILS = Metadata.Key.of("grpc-status-details-bin",
            ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void emptyTheLimits() {
        clock.advance(Duration.ofHours(1));
    }

    private GenerateRequest generate(String what) {
        return request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId(what), 4);
    }

    @Test
    void overGrpcTheRequestPastTheBurstIsResourceExhaustedWithItsWaitAndTakesNothing() throws Exception {
        for (int i = 0; i < RateLimitedFleetProfile.REQUEST_BURST; i++) {
            run(generate("burst"));
        }
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();
        GenerateRequest limited = generate("limited");
        double counted = rateLimited();

        StatusRuntimeException refused = start(limited).awaitStatus();

        assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode(), refused.getStatus().toString());
        Metadata trailers = refused.getTrailers();
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED.name(), trailers.get(ERROR_CODE));
        assertEquals("true", trailers.get(RETRYABLE));
        // two requests at one instant: the third fits one emission interval (1 s) later
        assertEquals("1000", trailers.get(RETRY_AFTER_MS));
        RetryInfo retry = trailers.get(DETAILS).getDetails(0).unpack(RetryInfo.class);
        assertEquals(1, retry.getRetryDelay().getSeconds());
        assertEquals(0, retry.getRetryDelay().getNanos());
        assertTrue(refused.getStatus().getDescription().contains("1 requests per second"),
                refused.getStatus().getDescription());
        assertEquals(sessionsBefore, sessions.count(), "a limited Generate allocated a session");
        assertTrue(sessions.of(limited.getRequestId()).isEmpty());
        assertEquals(requestsBefore, fleet().requestsTotal(), "a limited Generate reached an engine");
        assertEquals(counted + 1, rateLimited(), "counted as rate-limited, not as any other overload");

        clock.advance(Duration.ofSeconds(1));
        assertTrue(run(generate("after-the-wait")).stream().anyMatch(e -> e.hasUsage()));
    }

    @Test
    void overHttpACompletionPastTheBurstIs429WithRetryAfterInWholeSeconds() throws Exception {
        for (int i = 0; i < RateLimitedFleetProfile.REQUEST_BURST; i++) {
            assertEquals(200, completion().statusCode());
        }
        long sessionsBefore = sessions.count();
        long requestsBefore = fleet().requestsTotal();
        clock.advance(Duration.ofMillis(1)); // a wait of 999 ms still says 1 second
        double counted = rateLimited();

        HttpResponse<String> refused = completion();

        assertEquals(429, refused.statusCode(), refused.body());
        assertEquals("1", refused.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(refused.body().contains("\"type\":\"rate_limit_error\""), refused.body());
        assertTrue(refused.body().contains("\"code\":\"ERROR_CODE_OVERLOADED\""), refused.body());
        assertEquals(sessionsBefore, sessions.count());
        assertEquals(requestsBefore, fleet().requestsTotal());
        assertEquals(counted + 1, rateLimited(), "the HTTP front counts its refusals as gRPC does");
    }

    private double rateLimited() {
        return refusedCount(FleetRoutes.VLLM_CONTEXT_FIRST, ErrorCode.ERROR_CODE_OVERLOADED, "rate-limited");
    }

    @Test
    void theTokensChargedAreCorrectedByTheUsageReportedAndTheTokensLimitRefuses() {
        GenerateRequest first = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("tokens"), 600);
        Usage usage = run(first).stream().filter(GenerateResponse::hasUsage).reduce((a, b) -> b).orElseThrow()
                .getUsage();
        long used = (long) usage.getPromptTokens() + usage.getCompletionTokens();
        assertTrue(used < 1000, "used " + used);
        long requestsBefore = fleet().requestsTotal();
        long sessionsBefore = sessions.count();

        // 1,000 tokens a second is 1 ms a token. A probe one token over what is left whether the first request is
        // charged what it asked (before its correction is stored) or what it used (after): refused either way, and
        // its wait says which. A refusal takes nothing, so the test asks until the correction is in.
        long charged = AdmissionChecks.chargedTokens(first);
        assertNotEquals(charged, used, "the engine's count equals the estimate: nothing to correct");
        GenerateRequest probe = request(FleetRoutes.VLLM_CONTEXT_FIRST, requestId("tokens"), 1);
        long promptCharge = AdmissionChecks.chargedTokens(probe) - 1;
        long probeCharge = 1000 - Math.min(used, charged) + 1;
        GenerateRequest oneTooMany = probe.toBuilder().setStopping(probe.getStopping().toBuilder()
                .setMaxTokens((int) (probeCharge - promptCharge))).build();
        String correctedWait = Long.toString(used + probeCharge - 1000);
        Awaitility.await("the first request's usage corrected its charge").atMost(StreamingGenerate.WAIT)
                .pollInterval(Duration.ofMillis(20)).until(() -> {
                    StatusRuntimeException refused = start(oneTooMany).awaitStatus();
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
                    assertTrue(refused.getStatus().getDescription().contains("1000 tokens per second"),
                            refused.getStatus().getDescription());
                    return correctedWait.equals(refused.getTrailers().get(RETRY_AFTER_MS));
                });
        assertEquals(requestsBefore, fleet().requestsTotal());
        assertEquals(sessionsBefore, sessions.count());
    }

    @Test
    void anAllocationPastTheBurstIs429OverRest() throws Exception {
        for (int i = 0; i < RateLimitedFleetProfile.REQUEST_BURST; i++) {
            assertEquals(201, allocate().statusCode());
        }
        long sessionsBefore = sessions.count();

        HttpResponse<String> refused = allocate();

        assertEquals(429, refused.statusCode(), refused.body());
        assertEquals("1", refused.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(refused.body().contains("\"type\":\"rate_limited\""), refused.body());
        assertEquals(sessionsBefore, sessions.count(), "a limited allocation allocated a session");
    }

    private HttpResponse<String> completion() throws IOException, InterruptedException {
        String body = "{\"model\":\"" + FleetRoutes.VLLM_CONTEXT_FIRST + "\",\"prompt\":\"" + prompt(requestId("http"))
                + "\",\"max_tokens\":4}";
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + base.getPort() + "/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> allocate() throws IOException, InterruptedException {
        String body = "{\"request_id\":\"" + requestId("alloc") + "\",\"model\":\"" + FleetRoutes.VLLM_CONTEXT_FIRST
                + "\"}";
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + base.getPort() + "/v1/kv-sessions"))
                .header("Content-Type", "application/json").header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
