package io.handoff.connector.trtllm;

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
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a trtllm-serve worker says about itself: {@code /health}, {@code /v1/models}, {@code /server_info}
 * ({@code ctx_info_endpoint}, {@code ctx_dp_rank}: cached here per endpoint for generation-first, refreshed by every
 * probe) and {@code /prometheus/metrics}. The server role is not exposed over HTTP: it comes from the route.
 */
final class TrtllmProbe {

    /** Prometheus names read for load (as the simulator names them; the notes do not give the engine's). */
    static final Map<String, String> LOAD_METRICS = Map.of(
            "running_requests", "trtllm_num_requests_running",
            "waiting_requests", "trtllm_num_requests_waiting",
            "kv_usage", "trtllm_kv_cache_utilization");

    private final EngineHttpClient http;
    private final Duration timeout;
    private final Map<String, ServerInfo> serverInfo = new ConcurrentHashMap<>();

    TrtllmProbe(EngineHttpClient http, Duration timeout) {
        this.http = http;
        this.timeout = timeout;
    }

    /** The context worker's transceiver endpoint, from the cache or from its {@code /server_info}. */
    Uni<ServerInfo> serverInfo(Endpoint ctx) {
        ServerInfo cached = serverInfo.get(ctx.name() + "@" + ctx.uri());
        if (cached != null) {
            return Uni.createFrom().item(cached);
        }
        return http.get(ctx, "/server_info", timeout).map(reply -> {
            ServerInfo info = reply.ok() ? ServerInfo.parse(Json.parse(reply.body())) : null;
            if (info == null) {
                throw new IllegalStateException("/server_info answered HTTP " + reply.status() + " without"
                        + " disaggregated_params.ctx_info_endpoint (generation-first needs the Python transceiver)");
            }
            serverInfo.put(ctx.name() + "@" + ctx.uri(), info);
            return info;
        });
    }

    /** Forgets the cached endpoint (the context worker may have restarted with a new transceiver). */
    void forget(Endpoint ctx) {
        serverInfo.remove(ctx.name() + "@" + ctx.uri());
    }

    Uni<EndpointStatus> probe(Endpoint endpoint) {
        return Uni.combine().all()
                .unis(fetch(endpoint, "/health"), fetch(endpoint, "/v1/models"), fetch(endpoint, "/server_info"),
                        fetch(endpoint, "/prometheus/metrics"))
                .with((health, models, info, metrics) -> status(endpoint, health, models, info, metrics));
    }

    private Uni<ProbeReply> fetch(Endpoint endpoint, String path) {
        return ProbeReply.get(http, endpoint, path, timeout);
    }

    private EndpointStatus status(Endpoint endpoint, ProbeReply health, ProbeReply models, ProbeReply info,
            ProbeReply metrics) {
        List<String> notes = new ArrayList<>();
        boolean healthy = health.answered200();
        notes.add("health: " + health.describe());
        List<String> served = new ArrayList<>();
        if (models.ok()) {
            try {
                for (JsonNode m : Json.parse(models.body()).path("data")) {
                    served.add(m.path("id").asText());
                }
            } catch (IllegalArgumentException e) {
                notes.add("models: " + e.getMessage());
            }
        } else {
            notes.add("models: " + models.describe());
        }
        ServerInfo parsed = null;
        if (info.ok()) {
            try {
                parsed = ServerInfo.parse(Json.parse(info.body()));
            } catch (IllegalArgumentException e) {
                notes.add("server_info: " + e.getMessage());
            }
        }
        if (parsed != null) {
            serverInfo.put(endpoint.name() + "@" + endpoint.uri(), parsed);
            notes.add("ctx_info_endpoint: " + parsed.infoEndpoint() + " (dp rank " + parsed.dpRank() + ")");
        } else {
            forget(endpoint);
            notes.add("server_info: no ctx_info_endpoint");
        }
        Map<String, Double> load = new HashMap<>();
        if (metrics.ok()) {
            load.putAll(PrometheusText.parse(metrics.body()).sums(LOAD_METRICS));
        } else {
            notes.add("metrics: " + metrics.describe());
        }
        return new EndpointStatus(endpoint, healthy, Optional.empty(), served, Optional.empty(), load,
                String.join("; ", notes));
    }
}
