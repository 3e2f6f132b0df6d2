package io.handoff.simulator.trtllm;

import io.handoff.simulator.EngineConfig;

/** TensorRT-LLM-specific settings, named after {@code cache_transceiver_config} and the serve options. */
public final class TrtllmConfig extends EngineConfig {
    /** {@code --kv-transfer-timeout-ms}: cache_transceiver_config.kv_transfer_timeout_ms (60 s; <= 0: none). */
    public long kvTransferTimeoutMs = 60_000;
    /** {@code --auth-key}: internal_request_auth_key; when set, protected fields need a valid HMAC header. */
    public String authKey;
    /**
     * {@code --require-auth-key}: without a key, reject requests carrying protected fields (the strict variant);
     * otherwise accept them with a warning (the FutureWarning variant), counted in {@code auth_unverified}.
     */
    public boolean requireAuthKey;
    /** {@code --transceiver-port}: port of the simulated cache transceiver (0: any free port). */
    public int transceiverPort;
    /** {@code --ctx-info-host}: host advertised in ctx_info_endpoint and the opaque state. */
    public String ctxInfoHost = "127.0.0.1";
    /**
     * {@code --allow-local-disagg-ids}: accept disagg_request_id below 2^40. The engine does not check (such ids
     * collide with its local id space); the simulator rejects them with 400 by default to catch the mistake.
     */
    public boolean allowLocalDisaggIds;

    @Override
    public boolean apply(String name, String value) {
        switch (name) {
            case "kv-transfer-timeout-ms":
                kvTransferTimeoutMs = Long.parseLong(value);
                return true;
            case "auth-key":
                authKey = value;
                return true;
            case "require-auth-key":
                requireAuthKey = Boolean.parseBoolean(value);
                return true;
            case "transceiver-port":
                transceiverPort = Integer.parseInt(value);
                return true;
            case "ctx-info-host":
                ctxInfoHost = value;
                return true;
            case "allow-local-disagg-ids":
                allowLocalDisaggIds = Boolean.parseBoolean(value);
                return true;
            default:
                return super.apply(name, value);
        }
    }
}
