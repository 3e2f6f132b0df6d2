package io.handoff.simulator;

import io.handoff.simulator.openengine.OpenEngineConfig;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.handoff.simulator.sglang.SglangConfig;
import io.handoff.simulator.sglang.SglangEngine;
import io.handoff.simulator.trtllm.TrtllmConfig;
import io.handoff.simulator.trtllm.TrtllmEngine;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import java.util.Map;

/** Builds an engine of a family from command-line style options ({@code name -> value}, without the dashes). */
public final class Engines {
    private Engines() {
    }

    public static EngineConfig config(Family family) {
        switch (family) {
            case VLLM:
                return new VllmConfig();
            case SGLANG:
                return new SglangConfig();
            case OPENENGINE:
                return new OpenEngineConfig();
            default:
                return new TrtllmConfig();
        }
    }

    public static SimEngine create(EngineConfig c) {
        if (c instanceof VllmConfig) {
            return new VllmEngine((VllmConfig) c);
        }
        if (c instanceof SglangConfig) {
            return new SglangEngine((SglangConfig) c);
        }
        if (c instanceof OpenEngineConfig) {
            return new OpenEngineSimEngine((OpenEngineConfig) c);
        }
        if (c instanceof TrtllmConfig) {
            return new TrtllmEngine((TrtllmConfig) c);
        }
        throw new IllegalArgumentException("no engine for " + c.getClass());
    }

    public static SimEngine create(Family family, Map<String, String> options) {
        EngineConfig c = config(family);
        c.applyAll(options);
        return create(c);
    }
}
