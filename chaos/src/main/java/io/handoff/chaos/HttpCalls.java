package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * HTTP on loopback: the gateway's OpenAI-compatible front, its drain progress and REST mirror, and the simulators'
 * {@code /sim/*}.
 */
final class HttpCalls {

    static final String ADMIN_KEY = "chaos-admin";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Ends an HTTP completion's detail in the history, before the model (the route) it asked for. */
    static final String ON = ", model ";

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final History history;

    HttpCalls(History history) {
        this.history = history;
    }

    /**
     * One {@code POST /v1/completions}. {@code timeoutMs} is the client's patience for the answer's head;
     * {@code cancelAfterLines} (streamed) closes the connection after that many lines of the stream.
     */
    void completion(Replicas.Target t, String requestId, String model, int tokens, boolean stream, long timeoutMs,
            int cancelAfterLines) {
        long start = history.now();
        ObjectNode body = JSON.createObjectNode().put("model", model)
                .put("prompt", "chaos " + requestId + " over http [[eos:" + tokens + "]]")
                .put("max_tokens", tokens + 4).put("stream", stream);
        HttpRequest req = HttpRequest.newBuilder(URI.create(t.baseUrl() + "/v1/completions"))
                .timeout(Duration.ofMillis(timeoutMs)).header("Content-Type", "application/json")
                .header("X-Request-Id", requestId).POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        String kind = stream ? "http-stream" : "http";
        try {
            HttpResponse<InputStream> res = client.send(req, HttpResponse.BodyHandlers.ofInputStream());
            String outcome = "http-" + res.statusCode();
            int lines = 0;
            try (InputStream in = res.body();
                    BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (!line.isBlank()) {
                        lines++;
                    }
                    if (line.startsWith("data: [DONE]")) {
                        outcome += "-done";
                    }
                    if (stream && cancelAfterLines > 0 && lines >= cancelAfterLines) {
                        outcome = "client-cancelled";
                        break;
                    }
                }
            }
            history.op(kind, t.replicaId(), start, requestId, null, outcome, lines + " lines" + ON + model);
        } catch (HttpTimeoutException e) {
            history.op(kind, t.replicaId(), start, requestId, null, "client-timeout", timeoutMs + " ms" + ON + model);
        } catch (IOException e) {
            history.op(kind, t.replicaId(), start, requestId, null, "io-error", e.getMessage() + ON + model);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code GET /admin/drain}: the deployment's live sessions and engine holds, counted from the store. */
    JsonNode drainProgress(Replicas.Target t) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(t.baseUrl() + "/admin/drain"))
                .timeout(Duration.ofSeconds(5)).header("authorization", "Bearer " + ADMIN_KEY).GET().build();
        return getJson(req);
    }

    /** {@code GET /sim/stats} of one engine. */
    JsonNode simStats(String engineUrl) throws IOException, InterruptedException {
        return getJson(HttpRequest.newBuilder(URI.create(engineUrl + "/sim/stats")).timeout(Duration.ofSeconds(5))
                .GET().build());
    }

    /** {@code POST /sim/crash}: the engine drops everything it holds, and comes back with a new identity. */
    void simCrash(String engineUrl, long restartAfterMs) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(engineUrl + "/sim/crash"))
                .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"restart_after_ms\":" + restartAfterMs + "}")).build();
        HttpResponse<String> res = client.send(req, HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 202) {
            throw new IOException("crash answered " + res.statusCode());
        }
    }

    /** {@code POST /sim/faults} of one engine (the fields are merged into its faults), or {@code DELETE} with null. */
    void simFaults(String engineUrl, String faultsJson) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(engineUrl + "/sim/faults"))
                .timeout(Duration.ofSeconds(5));
        HttpRequest req = faultsJson == null ? b.DELETE().build() : b.header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(faultsJson)).build();
        HttpResponse<String> res = client.send(req, HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() / 100 != 2) {
            throw new IOException("/sim/faults answered " + res.statusCode() + ": " + res.body());
        }
    }

    private JsonNode getJson(HttpRequest req) throws IOException, InterruptedException {
        HttpResponse<String> res = client.send(req, HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new IOException(req.uri() + " answered " + res.statusCode() + ": " + res.body());
        }
        return JSON.readTree(res.body());
    }
}
