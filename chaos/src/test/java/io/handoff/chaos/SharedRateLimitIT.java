package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A tenant's rate limits are shared by every replica (issue 15, docs/api.md "Rate limits"): two packaged gateway
 * processes on one redis-server, a client alternating between them, and the tenant gets its burst once in total,
 * not once per replica. The rates are so low (0.001 a second) that nothing refills while the test runs: which request
 * passes is decided by counting alone, never by timing. The control runs the same requests against two processes
 * with the memory store, where each replica passes its own burst: the assertion tells the two apart.
 *
 * <p>Each refused request is checked to leave nothing behind: no session record in Redis, no request to any engine
 * of the simulated fleet. Every process started here is stopped in {@code finally} or {@code @AfterAll}.
 */
class SharedRateLimitIT {

    private static final String MODEL = "chaos-vllm";
    /** A tenant with a requests limit only: {@link #REQUEST_BURST} at once, then one every 1000 s. */
    private static final String REQUESTS_TENANT = "requests-limited";
    private static final String REQUESTS_KEY = "key-requests-limited";
    private static final int REQUEST_BURST = 4;
    /** A tenant with a tokens limit only: 1000 at once, then one every 1000 s. */
    private static final String TOKENS_TENANT = "tokens-limited";
    private static final String TOKENS_KEY = "key-tokens-limited";
    private static final int TOKEN_BURST = 1000;
    /** Each completion of the tokens test: charged 400 plus its short prompt; two fit in the burst, a third not. */
    private static final int MAX_TOKENS = 400;
    /** A series of the scrape: its labels and value (an exemplar, {@code # {span_id=...} ...}, may follow). */
    private static final Pattern RATE_LIMITED = Pattern.compile("^handoff_rate_limited_total\\{([^}]*)} (\\S+)",
            Pattern.MULTILINE);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path out;
    private static Path jar;
    private static RedisNode redis;
    private static SimulatorFleet fleet;
    private static List<GatewayReplica> shared = List.of();
    private final HttpClient http = HttpClient.newHttpClient();

    /** One request of a sequence, who answered it, and what it changed in the store and on the engines. */
    record Attempt(int index, String replicaId, String kind, TenantCalls.Answer answer, long newSessions,
            long newEngineRequests) {
    }

    @BeforeAll
    static void startRedisFleetAndTwoReplicas() throws Exception {
        jar = Path.of(System.getProperty("chaos.gateway.jar"));
        assertTrue(Files.isRegularFile(jar), "the packaged gateway is built before this module runs: " + jar);
        out = Path.of(System.getProperty("chaos.out") + "-shared-rate-limit");
        removeEarlierRun(out);
        Files.createDirectories(out);
        redis = new RedisNode(Files.createDirectories(out.resolve("redis")));
        redis.start();
        fleet = SimulatorFleet.start(System.getProperty("java.class.path"), out, 4000, 1);
        shared = startPair("redis", config("redis"), redis.gatewayEnvironment());
    }

    /**
     * The folder is this test's own: an earlier run's logs would be read as this run's (the ports a process printed)
     * and its Redis append-only file would bring back the tenants' spent limits.
     */
    private static void removeEarlierRun(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @AfterAll
    static void stopEverything() {
        try {
            shared.forEach(r -> r.process().stop());
        } finally {
            try {
                if (fleet != null) {
                    fleet.stop();
                }
            } finally {
                if (redis != null) {
                    redis.stop();
                }
            }
        }
    }

    @Test
    void theRequestBurstIsSpentOnceAcrossBothReplicas() throws Exception {
        try (TenantCalls a = new TenantCalls(shared.get(0), REQUESTS_KEY);
                TenantCalls b = new TenantCalls(shared.get(1), REQUESTS_KEY)) {
            List<Attempt> attempts = spendRequests("shared", a, b, true);

            assertEquals(REQUEST_BURST, accepted(attempts, null), () -> "one burst in all: " + attempts);
            for (TenantCalls r : List.of(a, b)) {
                assertEquals(REQUEST_BURST / 2, accepted(attempts, r.replicaId()),
                        () -> "accepted on both: " + attempts);
                assertTrue(refused(attempts, r.replicaId()) >= 1, () -> r.replicaId() + " refused none: " + attempts);
            }
            for (Attempt t : attempts) {
                assertEquals(t.index() < REQUEST_BURST, t.answer().accepted(), () -> "the burst first: " + t);
                if (t.answer().accepted()) {
                    // the probes see what an accepted request leaves: their zero for a refused one is a finding
                    assertEquals(1, t.newSessions(), () -> "an accepted request has its session: " + t);
                    assertEquals(t.kind().equals("completion"), t.newEngineRequests() > 0,
                            () -> "a completion reaches the engines, an allocation not yet: " + t);
                } else {
                    assertRefusedOverHttp(t, "requests");
                    assertLeftNothing(t);
                }
            }

            // gRPC, on the same spent limit: the wait in the trailer, nothing allocated, no engine asked
            Snapshot before = snapshot(true);
            TenantCalls.Answer generate = a.generateOverGrpc("shared-grpc-generate", MODEL,
                    "shared limit over grpc [[eos:2]]", 6);
            TenantCalls.Answer allocate = b.allocateOverGrpc("shared-grpc-allocate", MODEL);
            Snapshot after = snapshot(true);
            for (TenantCalls.Answer g : List.of(generate, allocate)) {
                assertEquals("RESOURCE_EXHAUSTED", g.status(), () -> "over gRPC: " + g);
                assertNotNull(g.retryAfter(), () -> "retry-after-ms trailer: " + g);
                assertTrue(Long.parseLong(g.retryAfter()) > 0, () -> "a wait: " + g);
                assertEquals("ERROR_CODE_OVERLOADED", g.body().path("error").path("code").asText(), g::toString);
            }
            assertEquals(before, after, "refused gRPC calls allocated a session or reached an engine");

            // each replica counted its own refusals: three over HTTP and one over gRPC
            for (TenantCalls r : List.of(a, b)) {
                String scrape = r.metrics();
                assertEquals(refused(attempts, r.replicaId()) + 1, rateLimited(scrape, REQUESTS_TENANT, "requests"),
                        () -> r.replicaId() + "'s refusals: " + rateLimitedLines(scrape));
            }
        }
    }

    /** The control: the same requests on two replicas with the memory store pass twice the burst. */
    @Test
    void withTheMemoryStoreEachReplicaSpendsItsOwnBurst() throws Exception {
        List<GatewayReplica> own = startPair("memory", config("memory"), Map.of());
        try (TenantCalls a = new TenantCalls(own.get(0), REQUESTS_KEY);
                TenantCalls b = new TenantCalls(own.get(1), REQUESTS_KEY)) {
            List<Attempt> attempts = spendRequests("memory", a, b, false);
            assertEquals(2 * REQUEST_BURST, accepted(attempts, null), () -> "a burst per replica: " + attempts);
            for (TenantCalls r : List.of(a, b)) {
                assertEquals(REQUEST_BURST, accepted(attempts, r.replicaId()), () -> "its own burst: " + attempts);
            }
        } finally {
            own.forEach(r -> r.process().stop());
        }
    }

    @Test
    void tokensChargedOnOneReplicaCountOnTheOther() throws Exception {
        try (TenantCalls a = new TenantCalls(shared.get(0), TOKENS_KEY);
                TenantCalls b = new TenantCalls(shared.get(1), TOKENS_KEY)) {
            // each asks 400 tokens plus a prompt of about 7; the simulator's end-of-sequence comes later (at 900),
            // so each runs its max_tokens out and the usage corrects the charge by a few prompt tokens at most
            String prompt = "shared tokens [[eos:900]]";
            List<Attempt> attempts = new ArrayList<>();
            TenantCalls[] order = {a, b, a, b};
            for (int i = 0; i < order.length; i++) {
                TenantCalls r = order[i];
                String id = "tokens-" + i;
                attempts.add(attempt(i, r, "completion", true, () -> r.completion(id, MODEL, prompt, MAX_TOKENS)));
            }
            for (Attempt t : attempts.subList(0, 2)) {
                assertEquals("200", t.answer().status(), () -> "within the token burst: " + t);
                assertEquals(MAX_TOKENS, t.answer().body().path("usage").path("completion_tokens").asInt(),
                        () -> "ran its max_tokens out: " + t);
            }
            for (Attempt t : attempts.subList(2, 4)) {
                assertRefusedOverHttp(t, "tokens");
                assertLeftNothing(t);
            }
            for (TenantCalls r : List.of(a, b)) {
                String scrape = r.metrics();
                assertEquals(1, rateLimited(scrape, TOKENS_TENANT, "tokens"),
                        () -> r.replicaId() + " refused one: " + rateLimitedLines(scrape));
                assertEquals(0, rateLimited(scrape, TOKENS_TENANT, "requests"), "this tenant has no requests limit");
            }
        }
    }

    /**
     * Twice the burst and two more, alternating replica A and B, in pairs of REST allocations and completions:
     * A allocates, B allocates, A completes, B completes, A allocates, ...
     */
    private List<Attempt> spendRequests(String label, TenantCalls a, TenantCalls b, boolean countSessions)
            throws Exception {
        List<Attempt> attempts = new ArrayList<>();
        for (int i = 0; i < 2 * REQUEST_BURST + 2; i++) {
            TenantCalls r = i % 2 == 0 ? a : b;
            String id = label + "-" + i;
            attempts.add((i / 2) % 2 == 0
                    ? attempt(i, r, "allocation", countSessions, () -> r.allocateOverRest(id, MODEL))
                    : attempt(i, r, "completion", countSessions,
                            () -> r.completion(id, MODEL, "shared requests " + id + " [[eos:2]]", 6)));
        }
        return attempts;
    }

    private interface Call {
        TenantCalls.Answer run() throws Exception;
    }

    private Attempt attempt(int index, TenantCalls r, String kind, boolean countSessions, Call call) throws Exception {
        Snapshot before = snapshot(countSessions);
        TenantCalls.Answer answer = call.run();
        Snapshot after = snapshot(countSessions);
        return new Attempt(index, r.replicaId(), kind, answer, after.sessions() - before.sessions(),
                after.engineRequests() - before.engineRequests());
    }

    private static void assertRefusedOverHttp(Attempt t, String limit) {
        TenantCalls.Answer a = t.answer();
        assertEquals("429", a.status(), () -> "refused: " + t);
        assertNotNull(a.retryAfter(), () -> "Retry-After: " + t);
        assertTrue(Long.parseLong(a.retryAfter()) >= 1, () -> "Retry-After in whole seconds: " + t);
        JsonNode error = a.body().path("error");
        assertEquals(t.kind().equals("allocation") ? "rate_limited" : "rate_limit_error", error.path("type").asText(),
                () -> "the documented type: " + t);
        assertEquals("ERROR_CODE_OVERLOADED", error.path("code").asText(), t::toString);
        assertTrue(error.path("message").asText().contains(limit + " per second"), () -> "names the limit: " + t);
    }

    private static void assertLeftNothing(Attempt t) {
        assertEquals(0, t.newSessions(), () -> "a refused request allocated a session: " + t);
        assertEquals(0, t.newEngineRequests(), () -> "a refused request reached an engine: " + t);
    }

    private static long accepted(List<Attempt> attempts, String replicaId) {
        return attempts.stream().filter(t -> replicaId == null || t.replicaId().equals(replicaId))
                .filter(t -> t.answer().accepted()).count();
    }

    private static long refused(List<Attempt> attempts, String replicaId) {
        return attempts.stream().filter(t -> t.replicaId().equals(replicaId)).filter(t -> !t.answer().accepted())
                .count();
    }

    /** What a request may leave behind: session records in Redis (every state), requests the engines received. */
    record Snapshot(long sessions, long engineRequests) {
    }

    private Snapshot snapshot(boolean countSessions) throws IOException, InterruptedException {
        long sessions = 0;
        if (countSessions) {
            // KEYS answers an array; its first line is its length, "*N"
            sessions = Long.parseLong(redis.command("KEYS", "handoff:*:session:*").substring(1));
        }
        long engineRequests = 0;
        for (SimulatorFleet.Engine e : fleet.engines()) {
            HttpResponse<String> res = http.send(HttpRequest.newBuilder(URI.create(e.url() + "/sim/stats"))
                    .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
            engineRequests += JSON.readTree(res.body()).path("requests_total").asLong();
        }
        return new Snapshot(sessions, engineRequests);
    }

    /** The value of {@code handoff_rate_limited_total{tenant,limit}} in a scrape; 0 when the series is absent. */
    private static double rateLimited(String scrape, String tenant, String limit) {
        Matcher m = RATE_LIMITED.matcher(scrape);
        while (m.find()) {
            if (m.group(1).contains("tenant=\"" + tenant + "\"") && m.group(1).contains("limit=\"" + limit + "\"")) {
                return Double.parseDouble(m.group(2));
            }
        }
        return 0;
    }

    private static List<String> rateLimitedLines(String scrape) {
        return scrape.lines().filter(l -> l.contains("rate_limited")).toList();
    }

    /** The chaos runs' routes over the fleet, API keys for the two tenants, and each tenant's own limit. */
    private static Map<String, String> config(String store) {
        Map<String, String> c = ChaosSettings.shortRun(out, jar, "").gatewayConfig(fleet);
        c.put("handoff.store.kind", store);
        c.put("handoff.auth.enabled", "true");
        c.put("handoff.auth.tenants." + REQUESTS_TENANT + ".api-keys", REQUESTS_KEY);
        c.put("handoff.auth.tenants." + TOKENS_TENANT + ".api-keys", TOKENS_KEY);
        c.put("handoff.rate-limits.tenants." + REQUESTS_TENANT + ".requests-per-second", "0.001");
        c.put("handoff.rate-limits.tenants." + REQUESTS_TENANT + ".request-burst", Integer.toString(REQUEST_BURST));
        c.put("handoff.rate-limits.tenants." + TOKENS_TENANT + ".tokens-per-second", "0.001");
        c.put("handoff.rate-limits.tenants." + TOKENS_TENANT + ".token-burst", Integer.toString(TOKEN_BURST));
        return c;
    }

    /** Two replicas started side by side; when one does not come up, the other is stopped before the failure. */
    private static List<GatewayReplica> startPair(String name, Map<String, String> config,
            Map<String, String> environment) {
        List<CompletableFuture<GatewayReplica>> starting = new ArrayList<>();
        for (String side : new String[] {"a", "b"}) {
            starting.add(CompletableFuture.supplyAsync(
                    () -> GatewayReplica.start(name + "-" + side, jar, out, config, environment)));
        }
        CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).exceptionally(failed -> null).join();
        if (starting.stream().anyMatch(CompletableFuture::isCompletedExceptionally)) {
            starting.stream().filter(f -> !f.isCompletedExceptionally()).forEach(f -> f.join().process().stop());
        }
        return starting.stream().map(CompletableFuture::join).toList();
    }
}
