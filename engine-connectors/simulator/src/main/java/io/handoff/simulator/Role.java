package io.handoff.simulator;

/**
 * The role an engine is deployed in. vLLM does not expose it (NixlConnector lets the proxy decide per request), SGLang
 * exposes it as {@code disaggregation_mode}, TensorRT-LLM as the server role (context / generation).
 */
public enum Role {
    PREFILL("prefill"),
    DECODE("decode"),
    /** Aggregated: prefill and decode on the same engine, no disaggregation. */
    BOTH("both");

    private final String wire;

    Role(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    public static Role parse(String s) {
        switch (s.toLowerCase()) {
            case "prefill":
            case "context":
            case "ctx":
            case "p":
                return PREFILL;
            case "decode":
            case "generation":
            case "gen":
            case "d":
                return DECODE;
            case "both":
            case "aggregated":
            case "agg":
            case "null":
            case "prefill-decode":
                return BOTH;
            default:
                throw new IllegalArgumentException("unknown role " + s + " (prefill, decode, both)");
        }
    }
}
