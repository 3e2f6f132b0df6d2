package io.handoff.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * After the run, asks each simulator ({@code GET /sim/stats}) whether every request really was a handoff: a decode
 * that lacked a parameter would have prefilled locally ({@code local_prefill_fallbacks}), one that read freed blocks
 * would have decoded garbage ({@code corrupt_kv_reads}), and with everything drained no KV may stay parked. Either
 * would make a run look faster than the real thing, so it counts as an error.
 */
final class EngineCheck {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] MUST_BE_ZERO = {"local_prefill_fallbacks", "corrupt_kv_reads",
        "kv_sessions_pinned_now", "requests_failed", "leaked_total"};

    private EngineCheck() {
    }

    /** Prints one line per engine and answers the problems found (empty when all is well). */
    static List<String> check(Vertx vertx, String role, URI engine) {
        List<String> problems = new ArrayList<>();
        try {
            JsonNode stats = stats(vertx, engine);
            StringBuilder line = new StringBuilder(String.format("  %-7s %s: requests_total %d, freed_by_pull %d",
                    role, engine, stats.path("requests_total").asLong(), stats.path("freed_by_pull").asLong()));
            for (String key : MUST_BE_ZERO) {
                long value = stats.path(key).asLong();
                line.append(", ").append(key).append(' ').append(value);
                if (value != 0) {
                    problems.add(role + " " + key + " = " + value);
                }
            }
            System.out.println(line);
        } catch (Exception e) {
            problems.add(role + ": /sim/stats unreadable: " + e);
        }
        return problems;
    }

    /** The simulator's {@code /sim/stats}. */
    static JsonNode stats(Vertx vertx, URI engine) throws Exception {
        HttpClient client = vertx.createHttpClient();
        try {
            Buffer body = client.request(new RequestOptions().setMethod(HttpMethod.GET).setHost(engine.getHost())
                            .setPort(engine.getPort()).setURI("/sim/stats"))
                    .compose(r -> r.send().compose(response -> response.body()))
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            return JSON.readTree(body.toString());
        } finally {
            client.close();
        }
    }
}
