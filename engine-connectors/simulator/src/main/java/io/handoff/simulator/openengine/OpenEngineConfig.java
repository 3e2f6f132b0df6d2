package io.handoff.simulator.openengine;

import io.handoff.simulator.EngineConfig;

/** Settings of a simulated openengine.v1 engine, on top of the shared {@link EngineConfig}. */
public class OpenEngineConfig extends EngineConfig {
    /** {@code --grpc-port}: where Inference and Control listen; 0 picks a free port (kept across restarts). */
    public int grpcPort;
    /** {@code --kv-transfer-port}: the simulated transfer server a decode pulls parked KV from; 0 picks one. */
    public int kvTransferPort;
    /** {@code --kv-transfer-host}: the host the session ref's endpoint names (default: {@code --host}). */
    public String kvTransferHost;
    /**
     * {@code --kv-session-timeout-ms}: how long a prefill engine keeps parked KV that no decode pulled, counted from
     * PrefillReady. 60 s mirrors TensorRT-LLM's {@code kv_transfer_timeout_ms}; {@code <= 0} means no timeout.
     */
    public long kvSessionTimeoutMs = 60_000;
    /** {@code --abort-cleanup}: report {@code supports_abort_cleanup} and free parked KV on Abort(kv_session). */
    public boolean abortCleanup;
    /** {@code --default-max-tokens}: output length when {@code stopping.max_tokens} is unset. */
    public int defaultMaxTokens = 16;
    /** {@code --max-sequences}: largest {@code sampling.num_sequences} accepted. */
    public int maxSequences = 8;

    @Override
    public boolean apply(String name, String value) {
        switch (name) {
            case "grpc-port":
                grpcPort = Integer.parseInt(value);
                return true;
            case "kv-transfer-port":
                kvTransferPort = Integer.parseInt(value);
                return true;
            case "kv-transfer-host":
                kvTransferHost = value;
                return true;
            case "kv-session-timeout-ms":
                kvSessionTimeoutMs = Long.parseLong(value);
                return true;
            case "abort-cleanup":
                abortCleanup = Boolean.parseBoolean(value);
                return true;
            case "default-max-tokens":
                defaultMaxTokens = Integer.parseInt(value);
                return true;
            case "max-sequences":
                maxSequences = Integer.parseInt(value);
                return true;
            default:
                return super.apply(name, value);
        }
    }

    String transferHost() {
        return kvTransferHost != null ? kvTransferHost : host;
    }
}
