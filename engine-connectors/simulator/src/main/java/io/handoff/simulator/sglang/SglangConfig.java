package io.handoff.simulator.sglang;

import io.handoff.simulator.EngineConfig;

/** SGLang-specific settings, named after the engine's server flags and environment variables. */
public final class SglangConfig extends EngineConfig {
    /** {@code --bootstrap-port}: --disaggregation-bootstrap-port of a prefill (engine default 8998; 0: any free). */
    public int bootstrapPort;
    /** {@code --bootstrap-timeout-ms}: SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT (300 s), prefill side. */
    public long bootstrapTimeoutMs = 300_000;
    /** {@code --waiting-timeout-ms}: SGLANG_DISAGGREGATION_WAITING_TIMEOUT (300 s), decode side. */
    public long waitingTimeoutMs = 300_000;
    /** {@code --heartbeat-interval-ms}: SGLANG_DISAGGREGATION_HEARTBEAT_INTERVAL (5 s). */
    public long heartbeatIntervalMs = 5_000;
    /** {@code --heartbeat-max-failure}: SGLANG_DISAGGREGATION_HEARTBEAT_MAX_FAILURE (2). */
    public int heartbeatMaxFailure = 2;
    /**
     * {@code --disconnect-abort-delay-ms}: how long after a client disconnect the abort happens. The engine needs
     * about 2 s (streaming) to 4 s (non-streaming); the simulator defaults to 0 for fast tests.
     */
    public long disconnectAbortDelayMs;
    /** {@code --transfer-backend}: reported in /server_info. */
    public String transferBackend = "mooncake";

    public SglangConfig() {
        maxModelLen = 8192;
    }

    @Override
    public boolean apply(String name, String value) {
        switch (name) {
            case "bootstrap-port":
                bootstrapPort = Integer.parseInt(value);
                return true;
            case "bootstrap-timeout-ms":
                bootstrapTimeoutMs = Long.parseLong(value);
                return true;
            case "waiting-timeout-ms":
                waitingTimeoutMs = Long.parseLong(value);
                return true;
            case "heartbeat-interval-ms":
                heartbeatIntervalMs = Long.parseLong(value);
                return true;
            case "heartbeat-max-failure":
                heartbeatMaxFailure = Integer.parseInt(value);
                return true;
            case "disconnect-abort-delay-ms":
                disconnectAbortDelayMs = Long.parseLong(value);
                return true;
            case "transfer-backend":
                transferBackend = value;
                return true;
            default:
                return super.apply(name, value);
        }
    }

    /** disaggregation_mode as /server_info reports it. */
    public String disaggregationMode() {
        switch (role) {
            case PREFILL:
                return "prefill";
            case DECODE:
                return "decode";
            default:
                return "null";
        }
    }
}
