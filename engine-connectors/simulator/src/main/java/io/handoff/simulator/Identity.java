package io.handoff.simulator;

import java.util.UUID;

/**
 * Who an engine process is. A restart mints a new {@code instanceId} and (unless fixed by configuration, like vLLM's
 * {@code kv_transfer_config.engine_id}) a new {@code engineId}, so native ids minted before the restart are unknown
 * after it.
 */
public final class Identity {
    private final String engineId;
    private final String instanceId;
    private final int incarnation;
    private final long startedAtMs;

    public Identity(String engineId, String instanceId, int incarnation, long startedAtMs) {
        this.engineId = engineId;
        this.instanceId = instanceId;
        this.incarnation = incarnation;
        this.startedAtMs = startedAtMs;
    }

    public static Identity first(String fixedEngineId, long nowMs) {
        return new Identity(fixedEngineId != null ? fixedEngineId : UUID.randomUUID().toString(),
            UUID.randomUUID().toString(), 1, nowMs);
    }

    public Identity next(String fixedEngineId, long nowMs) {
        return new Identity(fixedEngineId != null ? fixedEngineId : UUID.randomUUID().toString(),
            UUID.randomUUID().toString(), incarnation + 1, nowMs);
    }

    public String engineId() {
        return engineId;
    }

    public String instanceId() {
        return instanceId;
    }

    public int incarnation() {
        return incarnation;
    }

    public long startedAtMs() {
        return startedAtMs;
    }
}
