package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import io.handoff.connector.openai.http.EngineHttpClient;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.openai.http.ProbeReply;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.openengine.v1.EngineRole;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What an SGLang server says about itself: {@code /health}, {@code /server_info} (its {@code disaggregation_mode} is
 * the role, {@code served_model_name} and {@code context_length}), {@code /model_info} (the model path when no served
 * name is set) and {@code /v1/loads} (running and waiting requests, token usage, the PD queue depths).
 */
final class SglangProbe {

    private final EngineHttpClient http;
    private final Duration timeout;

    SglangProbe(EngineHttpClient http, Duration timeout) {
        this.http = http;
        this.timeout = timeout;
    }

    Uni<EndpointStatus> probe(Endpoint endpoint) {
        return Uni.combine().all()
                .unis(fetch(endpoint, "/health"), fetch(endpoint, "/server_info"), fetch(endpoint, "/v1/loads"),
                        fetch(endpoint, "/model_info"))
                .with((health, info, loads, model) -> status(endpoint, health, info, loads, model));
    }

    private Uni<ProbeReply> fetch(Endpoint endpoint, String path) {
        return ProbeReply.get(http, endpoint, path, timeout);
    }

    static EngineRole role(String disaggregationMode) {
        return switch (disaggregationMode == null ? "null" : disaggregationMode) {
            case "prefill" -> EngineRole.ENGINE_ROLE_PREFILL;
            case "decode" -> EngineRole.ENGINE_ROLE_DECODE;
            case "null", "" -> EngineRole.ENGINE_ROLE_AGGREGATED;
            default -> EngineRole.ENGINE_ROLE_UNSPECIFIED;
        };
    }

    private EndpointStatus status(Endpoint endpoint, ProbeReply health, ProbeReply info, ProbeReply loads,
            ProbeReply model) {
        List<String> notes = new ArrayList<>();
        boolean healthy = health.answered200();
        notes.add("health: " + health.describe());
        Optional<EngineRole> role = Optional.empty();
        List<String> models = new ArrayList<>();
        Optional<Integer> maxLen = Optional.empty();
        JsonNode serverInfo = json(info, "server_info", notes);
        if (serverInfo != null) {
            JsonNode mode = serverInfo.get("disaggregation_mode");
            role = Optional.of(role(mode == null || mode.isNull() ? "null" : mode.asText()));
            notes.add("disaggregation_mode: " + (mode == null ? "absent" : mode.asText())
                    + ", bootstrap port: " + serverInfo.path("disaggregation_bootstrap_port").asText("?")
                    + ", transfer backend: " + serverInfo.path("disaggregation_transfer_backend").asText("?")
                    + ", version: " + serverInfo.path("version").asText("?"));
            if (serverInfo.path("served_model_name").isTextual()) {
                models.add(serverInfo.get("served_model_name").asText());
            }
            if (serverInfo.path("context_length").canConvertToInt()) {
                maxLen = Optional.of(serverInfo.get("context_length").asInt());
            }
        }
        JsonNode modelInfo = json(model, "model_info", notes);
        if (models.isEmpty() && modelInfo != null && modelInfo.path("model_path").isTextual()) {
            models.add(modelInfo.get("model_path").asText());
        }
        Map<String, Double> load = new HashMap<>();
        JsonNode loadInfo = json(loads, "loads", notes);
        if (loadInfo != null) {
            for (JsonNode l : loadInfo.path("loads")) {
                add(load, "running_requests", l.path("num_running_reqs"));
                add(load, "waiting_requests", l.path("num_waiting_reqs"));
                if (l.path("token_usage").isNumber()) {
                    load.merge("kv_usage", l.get("token_usage").asDouble(), Math::max);
                }
                JsonNode d = l.path("disaggregation");
                for (String q : List.of("prefill_prealloc_queue_reqs", "prefill_inflight_queue_reqs",
                        "decode_prealloc_queue_reqs", "decode_transfer_queue_reqs", "decode_retracted_queue_reqs")) {
                    add(load, q, d.path(q));
                }
            }
        }
        return new EndpointStatus(endpoint, healthy, role, models, maxLen, load, String.join("; ", notes));
    }

    private static void add(Map<String, Double> load, String name, JsonNode value) {
        if (value.isNumber()) {
            load.merge(name, value.asDouble(), Double::sum);
        }
    }

    private static JsonNode json(ProbeReply reply, String what, List<String> notes) {
        if (reply.ok()) {
            try {
                return Json.parse(reply.body());
            } catch (IllegalArgumentException e) {
                notes.add(what + ": " + e.getMessage());
                return null;
            }
        }
        notes.add(what + ": " + reply.describe());
        return null;
    }
}
