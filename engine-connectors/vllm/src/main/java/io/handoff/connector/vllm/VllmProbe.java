package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.openai.http.EngineHttpClient;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.openai.http.ProbeReply;
import io.handoff.connector.openai.http.PrometheusText;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a vLLM server says about itself: {@code /health} (200 when the engine is alive), {@code /v1/models} (served
 * models, {@code max_model_len}) and {@code /metrics} (running and waiting requests, KV cache usage). vLLM does not
 * expose its P/D role, so the role stays empty: it comes from the route.
 */
final class VllmProbe {

    static final Map<String, String> LOAD_METRICS = Map.of(
            "running_requests", "vllm:num_requests_running",
            "waiting_requests", "vllm:num_requests_waiting",
            "kv_usage", "vllm:kv_cache_usage_perc");

    private final EngineHttpClient http;
    private final Duration timeout;
    private final String model;

    VllmProbe(EngineHttpClient http, Duration timeout, String model) {
        this.http = http;
        this.timeout = timeout;
        this.model = model;
    }

    Uni<EndpointStatus> probe(Endpoint endpoint) {
        return Uni.combine().all()
                .unis(fetch(endpoint, "/health"), fetch(endpoint, "/v1/models"), fetch(endpoint, "/metrics"))
                .with((health, models, metrics) -> status(endpoint, health, models, metrics));
    }

    private Uni<ProbeReply> fetch(Endpoint endpoint, String path) {
        return ProbeReply.get(http, endpoint, path, timeout);
    }

    private EndpointStatus status(Endpoint endpoint, ProbeReply health, ProbeReply models, ProbeReply metrics) {
        List<String> notes = new ArrayList<>();
        boolean healthy = health.answered200();
        notes.add("health: " + health.describe());
        List<String> served = new ArrayList<>();
        Optional<Integer> maxLen = Optional.empty();
        if (models.ok()) {
            try {
                for (JsonNode m : Json.parse(models.body()).path("data")) {
                    served.add(m.path("id").asText());
                    if (m.path("max_model_len").isNumber() && (maxLen.isEmpty() || model.equals(m.path("id").asText()))) {
                        maxLen = Optional.of(m.get("max_model_len").asInt());
                    }
                }
            } catch (IllegalArgumentException e) {
                notes.add("models: " + e.getMessage());
            }
        } else {
            notes.add("models: " + models.describe());
        }
        Map<String, Double> load = new HashMap<>();
        if (metrics.ok()) {
            load.putAll(PrometheusText.parse(metrics.body()).sums(LOAD_METRICS));
        } else {
            notes.add("metrics: " + metrics.describe());
        }
        return new EndpointStatus(endpoint, healthy, Optional.empty(), served, maxLen, load, String.join("; ", notes));
    }
}
