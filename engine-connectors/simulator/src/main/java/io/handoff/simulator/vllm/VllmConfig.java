package io.handoff.simulator.vllm;

import io.handoff.simulator.EngineConfig;

/** vLLM-specific settings, named after the engine's own knobs. */
public final class VllmConfig extends EngineConfig {
    /** Which generation of NixlConnector to imitate. */
    public enum Mode {
        /**
         * Builds before the lease work (vLLM PR #41383): fixed {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} from the end of
         * the prefill, no renewal; flat {@code remote_block_ids}; a prefill that stops (EOS or stop string) returns
         * {@code kv_transfer_params: null}; a decode that rejects a request does not notify the prefill.
         */
        LEGACY,
        /**
         * Builds with leases: {@code kv_lease_duration} (30 s) renewed by decode heartbeats every lease/6 to
         * max(old, now + lease*2/3) from the moment the decode's scheduler has the request; {@code remote_block_ids}
         * per KV-cache group; a stopped prefill still delays the free; a decode rejection notifies the prefill.
         */
        LEASE
    }

    /** {@code --mode legacy|lease}. */
    public Mode mode = Mode.LEGACY;
    /** {@code --abort-request-timeout-ms}: VLLM_NIXL_ABORT_REQUEST_TIMEOUT (480 s) in legacy mode. */
    public long abortRequestTimeoutMs = 480_000;
    /** {@code --kv-lease-duration-ms}: kv_connector_extra_config.kv_lease_duration (30 s) in lease mode. */
    public long kvLeaseDurationMs = 30_000;
    /** {@code --side-channel-host}: VLLM_NIXL_SIDE_CHANNEL_HOST, advertised as remote_host (default "localhost"). */
    public String sideChannelHost = "localhost";
    /** {@code --side-channel-port}: VLLM_NIXL_SIDE_CHANNEL_PORT (0: any free port; the engine default is 5600). */
    public int sideChannelPort;
    /** {@code --kv-load-failure-policy fail|recompute}: what a decode does when its read fails (default fail). */
    public String kvLoadFailurePolicy = "fail";
    /** {@code --tp-size}: advertised tp_size. */
    public int tpSize = 1;
    /** {@code --no-kv-connector}: the engine has no KV connector; kv_transfer_params are ignored. */
    public boolean kvConnector = true;

    public VllmConfig() {
        maxModelLen = 8192;
    }

    @Override
    public boolean apply(String name, String value) {
        switch (name) {
            case "mode":
                mode = Mode.valueOf(value.toUpperCase());
                return true;
            case "abort-request-timeout-ms":
                abortRequestTimeoutMs = Long.parseLong(value);
                return true;
            case "kv-lease-duration-ms":
                kvLeaseDurationMs = Long.parseLong(value);
                return true;
            case "side-channel-host":
                sideChannelHost = value;
                return true;
            case "side-channel-port":
                sideChannelPort = Integer.parseInt(value);
                return true;
            case "kv-load-failure-policy":
                kvLoadFailurePolicy = value;
                return true;
            case "tp-size":
                tpSize = Integer.parseInt(value);
                return true;
            case "no-kv-connector":
                kvConnector = !Boolean.parseBoolean(value);
                return true;
            default:
                return super.apply(name, value);
        }
    }

    /** The hold time of a finished prefill. */
    public long holdTtlMs() {
        return mode == Mode.LEGACY ? abortRequestTimeoutMs : kvLeaseDurationMs;
    }
}
