package io.handoff.connector.openengine;

import io.grpc.Status;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.HealthState;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads an endpoint's GetServerInfo, Health, GetLoad and GetModelInfo into an EndpointStatus. Besides health, it checks
 * what the route assumes about the engine: its role fits the pool it is in, its wire revision accepts us, and it
 * really frees parked KV on Abort(kv_session) when the route says {@code abort-cleanup=true}. A mismatch makes the
 * endpoint unhealthy with the reason, rather than letting the gateway believe something the engine does not do.
 */
final class ProbeReport {
    /** The openengine.v1 wire revision this connector speaks. */
    static final int CLIENT_REVISION = 1;

    private ProbeReport() {
    }

    static EndpointStatus status(Endpoint endpoint, ServerInfo info, HealthResponse health, LoadInfo load,
        ModelInfo model, OpenEngineOptions options, boolean inPrefillPool, boolean inDecodePool) {
        List<String> problems = new ArrayList<>();
        HealthState state = health.getState();
        if (state != HealthState.HEALTH_STATE_READY && state != HealthState.HEALTH_STATE_DEGRADED) {
            problems.add("health " + state);
        }
        EngineRole role = info.getEngineRole();
        if (inPrefillPool && role != EngineRole.ENGINE_ROLE_PREFILL) {
            problems.add("role " + role + " in the prefill pool (only a PREFILL engine parks KV for a decode)");
        }
        if (inDecodePool && role == EngineRole.ENGINE_ROLE_PREFILL) {
            problems.add("role PREFILL in the decode pool");
        }
        if (info.getMinimumClientRevision() > CLIENT_REVISION) {
            problems.add("engine needs client revision " + info.getMinimumClientRevision() + ", we speak "
                + CLIENT_REVISION);
        }
        boolean engineCleans = info.getKvConnector().getSupportsAbortCleanup();
        if (options.abortCleanup() && !engineCleans) {
            problems.add("route sets abort-cleanup=true but the engine reports supports_abort_cleanup=false");
        }
        Map<String, Double> figures = new LinkedHashMap<>();
        if (load != null) {
            put(figures, "running_requests", load.hasRunningRequests(), load.getRunningRequests());
            put(figures, "queued_requests", load.hasQueuedRequests(), load.getQueuedRequests());
            put(figures, "active_kv_sessions", load.hasActiveKvSessions(), load.getActiveKvSessions());
            put(figures, "used_kv_blocks", load.hasUsedKvBlocks(), load.getUsedKvBlocks());
            put(figures, "total_kv_blocks", load.hasTotalKvBlocks(), load.getTotalKvBlocks());
            if (load.hasUsedKvBlocks() && load.getTotalKvBlocks() > 0) {
                figures.put("kv_usage", (double) load.getUsedKvBlocks() / load.getTotalKvBlocks());
            }
        }
        Optional<Integer> maxContext = model != null && model.hasMaxContextLength()
            ? Optional.of(model.getMaxContextLength()) : Optional.empty();
        String detail = info.getEngineName() + " " + info.getEngineVersion() + " instance " + info.getInstanceId()
            + " revision " + info.getSchemaRevision() + " abort_cleanup=" + engineCleans
            + (problems.isEmpty() ? "" : "; " + String.join("; ", problems));
        return new EndpointStatus(endpoint, problems.isEmpty(), Optional.of(role), info.getSupportedModelsList(),
            maxContext, figures, detail);
    }

    static EndpointStatus unreachable(Endpoint endpoint, Throwable t) {
        return new EndpointStatus(endpoint, false, Optional.empty(), List.of(), Optional.empty(), Map.of(),
            "unreachable: " + Status.fromThrowable(t));
    }

    private static void put(Map<String, Double> m, String name, boolean present, double value) {
        if (present) {
            m.put(name, value);
        }
    }
}
