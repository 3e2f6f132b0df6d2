package io.handoff.simulator;

import java.util.Map;

/**
 * Settings shared by every simulated engine. Public fields, set before {@link SimEngine#start}; families extend it with
 * their native knobs. Command-line names are given per field ({@code --name value}).
 */
public class EngineConfig {
    /** {@code --host}: interface to bind (default loopback). */
    public String host = "127.0.0.1";
    /** {@code --port}: HTTP port; 0 picks a free one. */
    public int port;
    /** {@code --role}: prefill, decode or both. */
    public Role role = Role.BOTH;
    /** {@code --model}: served model name. */
    public String model = "sim-model";
    /** {@code --max-model-len}: context length; longer prompts are rejected with 400. */
    public int maxModelLen = 8192;
    /** {@code --kv-blocks}: KV pool size in blocks. */
    public int totalBlocks = 8192;
    /** {@code --block-size}: tokens per KV block. */
    public int blockSize = 16;
    /** {@code --max-running}: concurrent running requests (max_num_seqs / max_running_requests / max_batch_size). */
    public int maxRunning = 256;
    /** {@code --prefill-latency-ms}: simulated prefill compute time per request. */
    public long prefillLatencyMs;
    /**
     * {@code --prefill-ms-per-uncached-token}: simulated prefill time per prompt token not in the prefix cache, on top
     * of {@link #prefillLatencyMs} (0: a prefill's time does not depend on its prompt).
     */
    public double prefillMsPerUncachedToken;
    /** {@code --prefix-cache-blocks}: blocks the prefix cache keeps, least recently used out first (-1: kv-blocks). */
    public int prefixCacheBlocks = -1;
    /** {@code --token-interval-ms}: simulated time per decoded token (0: emit as fast as possible). */
    public long tokenIntervalMs;
    /** {@code --transfer-latency-ms}: simulated KV transfer time. */
    public long transferLatencyMs;
    /** {@code --restart-after-crash-ms}: restart automatically this long after a crash (-1: stay down). */
    public long restartAfterCrashMs = -1;
    /** {@code --engine-id}: fixed engine id kept across restarts (vLLM {@code kv_transfer_config.engine_id}). */
    public String fixedEngineId;
    /** The time source; engines of a fleet may share one. Null: a fresh {@link SimClock}. */
    public SimClock clock;

    /** Applies one command-line option; returns false if the name is not known here. */
    public boolean apply(String name, String value) {
        switch (name) {
            case "host":
                host = value;
                return true;
            case "port":
                port = Integer.parseInt(value);
                return true;
            case "role":
                role = Role.parse(value);
                return true;
            case "model":
                model = value;
                return true;
            case "max-model-len":
                maxModelLen = Integer.parseInt(value);
                return true;
            case "kv-blocks":
                totalBlocks = Integer.parseInt(value);
                return true;
            case "block-size":
                blockSize = Integer.parseInt(value);
                return true;
            case "max-running":
                maxRunning = Integer.parseInt(value);
                return true;
            case "prefill-latency-ms":
                prefillLatencyMs = Long.parseLong(value);
                return true;
            case "prefill-ms-per-uncached-token":
                prefillMsPerUncachedToken = Double.parseDouble(value);
                if (!(prefillMsPerUncachedToken >= 0) || Double.isInfinite(prefillMsPerUncachedToken)) {
                    throw new IllegalArgumentException("--prefill-ms-per-uncached-token must be a number, 0 or more");
                }
                return true;
            case "prefix-cache-blocks":
                prefixCacheBlocks = Integer.parseInt(value);
                if (prefixCacheBlocks < -1) {
                    throw new IllegalArgumentException("--prefix-cache-blocks must be -1 (kv-blocks), 0 or more");
                }
                return true;
            case "token-interval-ms":
                tokenIntervalMs = Long.parseLong(value);
                return true;
            case "transfer-latency-ms":
                transferLatencyMs = Long.parseLong(value);
                return true;
            case "restart-after-crash-ms":
                restartAfterCrashMs = Long.parseLong(value);
                return true;
            case "engine-id":
                fixedEngineId = value;
                return true;
            default:
                return false;
        }
    }

    /** Applies all options, failing on an unknown one. */
    public void applyAll(Map<String, String> options) {
        options.forEach((k, v) -> {
            if (!apply(k, v)) {
                throw new IllegalArgumentException("unknown option --" + k);
            }
        });
    }
}
