package io.handoff.gateway.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.grpc.Status;
import io.handoff.gateway.fleet.KubernetesDiscoveryProfile;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.handoff.openengine.v1.StoppingOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard and the Prometheus alerts under {@code deploy/} read only metrics the gateway exports: a
 * gateway with a simulated fleet, some of whose pools are discovered in Kubernetes (the mock API server of
 * {@link KubernetesDiscoveryProfile}, so that the discovery watches report), serves requests of every kind the
 * metrics count (orchestrated, bypassed, refused, a caller's session renewed, a drain's progress read, a route
 * reload refused), then every metric name in every panel's query, template
 * variable and alert expression must be a series of its {@code /q/metrics}. Names are compared as Prometheus stores
 * series: a histogram or timer is read through its {@code _bucket}, {@code _count}, {@code _sum} or {@code _max}
 * series, each of which the scrape holds under that name.
 */
@QuarkusTest
@TestProfile(KubernetesDiscoveryProfile.class)
class DashboardMetricsTest {

    /** How long a loaded machine may take before every metric has its first sample. */
    private static final Duration METRICS_DEADLINE = Duration.ofSeconds(60);
    private static final Pattern SAMPLE_NAME = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)", Pattern.MULTILINE);

    @TestHTTPResource("/")
    URL base;

    @Inject
    MeterRegistry registry;

    @Test
    void everyMetricOfEveryPanelAndAlertIsExported() throws Exception {
        Map<String, Set<String>> named = new TreeMap<>();
        for (Path dashboard : DeployFiles.filesUnder(DeployFiles.GRAFANA)) {
            named.putAll(dashboardQueries(dashboard));
        }
        for (Path rules : DeployFiles.filesUnder(DeployFiles.PROMETHEUS)) {
            named.putAll(alertExpressions(rules));
        }
        assertFalse(named.isEmpty(), "no dashboard or alert under " + DeployFiles.DEPLOY);
        named.forEach((where, metrics) -> assertFalse(metrics.isEmpty(), where + " names no metric"));

        driveEveryKindOfRequest();

        Awaitility.await("every metric the dashboards and alerts name").atMost(METRICS_DEADLINE)
                .pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                    Set<String> exported = exported(RestAssured.given().baseUri(base.toString()).get("/q/metrics")
                            .then().statusCode(200).extract().asString());
                    List<String> missing = new ArrayList<>();
                    named.forEach((where, metrics) -> metrics.stream().filter(m -> !exported.contains(m))
                            .forEach(m -> missing.add(where + ": " + m)));
                    assertEquals(List.of(), missing, "named but not exported");
                });
    }

    /**
     * The metrics added for the dashboard count what they name: the wait for the first token once per request that
     * streamed one (by its route and style, bypass included), a caller's renewal, a handoff's end by style and outcome.
     */
    @Test
    void firstTokensRenewalsAndEndingsAreCountedOncePerRequest() throws Exception {
        long orchestrated = firstTokens("context-first");
        long bypassed = firstTokens("bypass");
        double renewed = registry.get("handoff.sessions.renewed").counter().count();
        double completed = completed();

        driveEveryKindOfRequest();

        assertEquals(orchestrated + 1, firstTokens("context-first"));
        assertEquals(bypassed + 1, firstTokens("bypass"));
        assertEquals(renewed + 1, registry.get("handoff.sessions.renewed").counter().count());
        // the session's end is written as the stream ends: counted at most a moment after the client saw the end
        Awaitility.await().atMost(METRICS_DEADLINE).until(() -> completed() == completed + 1);
    }

    private long firstTokens(String style) {
        Timer timer = registry.find("handoff.generate.first.token").tags("route", "vllm", "style", style).timer();
        return timer == null ? 0 : timer.count();
    }

    private double completed() {
        Counter counter = registry.find("handoff.generate.ended")
                .tags("route", "vllm", "style", "context-first", "outcome", "COMPLETE").counter();
        return counter == null ? 0 : counter.count();
    }

    /** A name the gateway does not export is caught: the check above can fail. */
    @Test
    void aMetricTheGatewayDoesNotExportIsNotTakenForOne() {
        Set<String> exported = exported(RestAssured.given().baseUri(base.toString()).get("/q/metrics").asString());
        assertTrue(exported.contains("handoff_sessions_allocated_total"), exported.toString());
        assertFalse(exported.contains("handoff_sessions_leaked_total"));
        assertFalse(exported.contains("handoff_reaper_lag_seconds_total"), "a timer has no _total series");
    }

    /** Every panel's and template variable's query, by where it is, with the metrics it names. */
    private static Map<String, Set<String>> dashboardQueries(Path file) throws IOException {
        JsonNode dashboard = new ObjectMapper().readTree(file.toFile());
        Map<String, Set<String>> queries = new TreeMap<>();
        List<JsonNode> panels = new ArrayList<>();
        dashboard.path("panels").forEach(p -> {
            panels.add(p);
            p.path("panels").forEach(panels::add); // the panels of a collapsed row
        });
        assertFalse(panels.isEmpty(), file + " has no panel");
        for (JsonNode panel : panels) {
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            String title = file.getFileName() + " panel \"" + panel.path("title").asText() + "\"";
            assertFalse(panel.path("targets").isEmpty(), title + " queries nothing");
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asText();
                assertFalse(expr.isBlank(), title + " has a target with no expr");
                queries.put(title + " " + target.path("refId").asText(), PromQl.metricNames(expr));
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                JsonNode query = variable.path("query");
                String text = query.isTextual() ? query.asText() : query.path("query").asText();
                queries.put(file.getFileName() + " variable $" + variable.path("name").asText(),
                        PromQl.metricNames(text));
            }
        }
        return queries;
    }

    /** Every alert's expression, by its name, with the metrics it names. */
    private static Map<String, Set<String>> alertExpressions(Path file) throws IOException {
        JsonNode rules = new YAMLMapper().readTree(Files.readString(file));
        Map<String, Set<String>> expressions = new TreeMap<>();
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                String name = rule.has("alert") ? rule.path("alert").asText() : rule.path("record").asText();
                expressions.put(file.getFileName() + " " + name, PromQl.metricNames(rule.path("expr").asText()));
            }
        }
        assertFalse(expressions.isEmpty(), file + " has no rule");
        return expressions;
    }

    /** The names of the series a Prometheus scrape holds (comment lines, such as # TYPE, are not series). */
    private static Set<String> exported(String scrape) {
        Set<String> names = new TreeSet<>();
        Matcher m = SAMPLE_NAME.matcher(scrape);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /**
     * Requests of every kind a panel or alert counts: orchestrated, bypassed, refused; a caller's session allocated,
     * renewed and released; the drain's progress read (which a drain that does not finish is alerted on); a route
     * reload refused (a key outside the routes), which changes nothing.
     */
    private void driveEveryKindOfRequest() throws InterruptedException {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 3)
                    .awaitEnd().getCode());
            GenerateRequest bypass = GenerateRequest.newBuilder().setRequestId("bypass-" + UUID.randomUUID())
                    .setModel("m-vllm").setPrompt("The quick brown fox jumps over the lazy dog")
                    .setStopping(StoppingOptions.newBuilder().setMaxTokens(3))
                    .setKv(KvOptions.newBuilder()
                            .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS))
                    .build();
            assertEquals(Status.Code.OK, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, bypass)
                    .awaitEnd().getCode());
            assertEquals(Status.Code.NOT_FOUND, GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY,
                    "no-such-model", 3).awaitEnd().getCode());

            OpenEngineKvGrpc.OpenEngineKvBlockingStub kv = GrpcTestClient.withKey(
                    OpenEngineKvGrpc.newBlockingStub(client.channel()), ControlPlaneProfile.TEAM_A_KEY);
            String unique = UUID.randomUUID().toString();
            KvSession session = kv.allocateKvSession(AllocateKvSessionRequest.newBuilder().setRequestId("r-" + unique)
                    .setModel("m-vllm").setIdempotencyKey("k-" + unique).build());
            kv.renewKvSession(RenewKvSessionRequest.newBuilder().setSessionId(session.getRef().getSessionId()).build());
            kv.releaseKvSession(ReleaseKvSessionRequest.newBuilder().setSessionId(session.getRef().getSessionId())
                    .build());
        }
        RestAssured.given().baseUri(base.toString()).header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY)
                .get("/admin/drain").then().statusCode(200);
        RestAssured.given().baseUri(base.toString()).header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY)
                .body("handoff.session.max-lease=2h").post("/admin/routes/reload").then().statusCode(422);
    }
}
