package io.handoff.simulator;

/** The engine family a simulator imitates. */
public enum Family {
    VLLM("vllm"),
    SGLANG("sglang"),
    TRTLLM("trtllm"),
    /** Engines that already speak openengine.v1 over gRPC (trtllm-serve's openengine adapter, Dynamo sidecars). */
    OPENENGINE("openengine");

    private final String wire;

    Family(String wire) {
        this.wire = wire;
    }

    /** The lower-case name used on the command line and in {@code /sim/stats}. */
    public String wire() {
        return wire;
    }

    public static Family parse(String s) {
        for (Family f : values()) {
            if (f.wire.equalsIgnoreCase(s) || f.name().equalsIgnoreCase(s)) {
                return f;
            }
        }
        if ("openengine.v1".equalsIgnoreCase(s)) {
            return OPENENGINE;
        }
        if ("tensorrt-llm".equalsIgnoreCase(s) || "trt-llm".equalsIgnoreCase(s)) {
            return TRTLLM;
        }
        throw new IllegalArgumentException("unknown family " + s + " (vllm, sglang, trtllm, openengine)");
    }
}
