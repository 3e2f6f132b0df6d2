package io.handoff.gateway.api.view;

import io.grpc.Status;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.gateway.testing.HeadlessChromium;
import io.handoff.gateway.testing.SimulatedFleetProfile;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The live view in a real browser ({@link HeadlessChromium}). The page is opened first, then requests go through the
 * gateway (a Generate over gRPC, a completion over the OpenAI front) and KV sessions are allocated; the test waits
 * until the page shows each request with its ending state, a session's lease counting down, an ended session whose KV
 * the engine holds, and the sessions by state as the store counts them, checks a route and an endpoint's health and
 * breaker, and saves a screenshot as {@code target/live-view.png}. Auth is off on this profile: the page needs no key.
 */
@QuarkusTest
@TestProfile(SimulatedFleetProfile.class)
class LiveViewBrowserTest {

    private static final Path SCREENSHOT = Path.of("target", "live-view.png");
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static WebDriver browser;

    @TestHTTPResource("/")
    URL base;

    @Inject
    SessionStore store;

    @Inject
    FleetSampler sampler;

    @Inject
    SessionService sessions;

    @Inject
    Clock clock;

    @BeforeAll
    static void openBrowser() {
        browser = HeadlessChromium.open();
    }

    @AfterAll
    static void closeBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    private static KvSession allocate(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv) {
        return kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("view-" + UUID.randomUUID())
                .setModel(FleetRoutes.VLLM_CONTEXT_FIRST).setIdempotencyKey(UUID.randomUUID().toString()).build());
    }

    @Test
    void thePageShowsRequestsAsTheyEndTheFleetAndTheSessions() throws IOException {
        sampler.sampleNow().await().atMost(PATIENCE);
        browser.get(base + "handoff");
        WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
        wait.until(ExpectedConditions.attributeToBe(By.id("status"), "data-status", "live"));
        assertTrue(browser.getCurrentUrl().endsWith("/handoff/"), browser.getCurrentUrl());

        GrpcTestClient client = GrpcTestClient.ofGateway();
        try {
            GenerateCall generate = GenerateCall.start(client, "no-key-needed", FleetRoutes.SGLANG_CONCURRENT, 4);
            String completion = "view-cmpl-" + UUID.randomUUID();
            RestAssured.given().baseUri(base.toString()).contentType("application/json")
                    .header("X-Request-Id", completion).body("{\"model\":\"" + FleetRoutes.VLLM_CONTEXT_FIRST
                            + "\",\"prompt\":\"Disaggregated serving is\",\"max_tokens\":4}")
                    .post("/v1/completions").then().statusCode(200);
            assertEquals(Status.Code.OK, generate.awaitEnd().getCode());
            OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = OpenEngineKvGrpc.newBlockingStub(client.channel());
            KvSession live = allocate(kv);
            // an ended session whose parked prefill the engine holds on its own timer
            KvSession held = allocate(kv);
            sessions.recordObligation(SimulatedFleetProfile.TENANT, held.getRef().getSessionId(),
                    CleanupObligation.pending("prefill@prefill-0", "vllm", "prefill-0", "parked-prefill-kv", Map.of(),
                            clock.instant().plus(Duration.ofMinutes(8)), true)).await().atMost(PATIENCE);
            kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(held.getRef().getSessionId())
                    .build());

            for (Map.Entry<String, String> request : Map.of(generate.requestId(), FleetRoutes.SGLANG_CONCURRENT,
                    completion, FleetRoutes.VLLM_CONTEXT_FIRST).entrySet()) {
                String row = "#handoffs tr[data-request-id='" + request.getKey() + "'] ";
                wait.until(ExpectedConditions.textToBe(By.cssSelector(row + "td.state"), "COMPLETE"));
                assertEquals(request.getValue(), browser.findElement(By.cssSelector(row + "td.route-name"))
                        .getText());
                assertTrue(browser.findElement(By.cssSelector(row + "td.trace")).getText()
                        .matches("[0-9a-f]{32}"));
            }

            By lease = By.cssSelector("#leases tr[data-session-id='" + live.getRef().getSessionId() + "'] .countdown");
            wait.until(ExpectedConditions.textMatches(lease, Pattern.compile("\\d+(\\.\\d)? s")));

            wait.until(ExpectedConditions.textToBe(By.cssSelector("#held tr[data-session-id='"
                    + held.getRef().getSessionId() + "'] td.state"), "RELEASED"));

            WebElement route = browser.findElement(By.cssSelector("[data-route='" + FleetRoutes.VLLM_CONTEXT_FIRST
                    + "']"));
            WebElement decode = route.findElement(By.cssSelector("[data-endpoint='" + FleetRoutes.VLLM_CONTEXT_FIRST
                    + "/decode/decode-0']"));
            assertEquals("healthy", decode.findElement(By.cssSelector(".health")).getText());
            assertEquals("closed", decode.findElement(By.cssSelector(".breaker")).getText());

            // nothing else moves sessions on this profile (no keepalive, no reaper): the page catches up with the store
            Map<SessionState, Long> counted = store.countByState().await().atMost(PATIENCE);
            for (SessionState state : new SessionState[] {SessionState.ALLOCATED, SessionState.COMPLETE}) {
                wait.until(ExpectedConditions.textToBe(By.cssSelector("#by-state td[data-state='" + state.name()
                        + "']"), Long.toString(counted.get(state))));
            }
            assertTrue(counted.get(SessionState.COMPLETE) >= 2 && counted.get(SessionState.ALLOCATED) >= 1,
                    counted.toString());

            Files.createDirectories(SCREENSHOT.getParent());
            File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
            Files.copy(shot.toPath(), SCREENSHOT, StandardCopyOption.REPLACE_EXISTING);
            assertTrue(Files.size(SCREENSHOT) > 10_000, "a screenshot of the page, not an empty image");
        } finally {
            try {
                client.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
