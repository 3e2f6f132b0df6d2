package io.handoff.simulator;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One prefill and one decode engine of each family on consecutive ports, sharing one {@link SimClock}:
 * base+0 vLLM prefill, +1 vLLM decode, +2 SGLang prefill, +3 SGLang decode, +4 TensorRT-LLM context, +5 TensorRT-LLM
 * generation. Auxiliary servers (NIXL side channel, SGLang bootstrap, TRT-LLM transceiver) get base+100+i. With base 0
 * every port is picked free.
 */
public final class SimFleet implements AutoCloseable {
    private final List<SimEngine> engines = new ArrayList<>();

    private SimFleet() {
    }

    /**
     * Starts the fleet.
     *
     * @param options engine options applied to every engine where the family knows them (e.g. model, kv-blocks)
     */
    public static SimFleet start(Vertx vertx, int basePort, Map<String, String> options) {
        SimFleet fleet = new SimFleet();
        SimClock clock = new SimClock();
        int i = 0;
        for (Family f : Family.values()) {
            for (Role r : new Role[] {Role.PREFILL, Role.DECODE}) {
                EngineConfig c = Engines.config(f);
                options.forEach(c::apply);
                c.role = r;
                c.clock = clock;
                c.port = basePort == 0 ? 0 : basePort + i;
                if (basePort != 0) {
                    String aux = String.valueOf(basePort + 100 + i);
                    c.apply(f == Family.VLLM ? "side-channel-port" : f == Family.SGLANG ? "bootstrap-port"
                        : "transceiver-port", aux);
                }
                fleet.engines.add(Engines.create(c).startBlocking(vertx));
                i++;
            }
        }
        return fleet;
    }

    public List<SimEngine> engines() {
        return engines;
    }

    /** The engine of a family and role. */
    public SimEngine get(Family family, Role role) {
        for (SimEngine e : engines) {
            if (e.family() == family && e.role() == role) {
                return e;
            }
        }
        throw new IllegalArgumentException(family + " " + role);
    }

    /** One line per engine: family, role, URL and auxiliary ports. */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        for (SimEngine e : engines) {
            out.add(describe(e));
        }
        return out;
    }

    static String describe(SimEngine e) {
        Map<String, Object> aux = new LinkedHashMap<>();
        for (String name : new String[] {"side_channel", "bootstrap", "transceiver"}) {
            if (e.auxPort(name) > 0) {
                aux.put(name, e.auxPort(name));
            }
        }
        return String.format("%-7s %-8s %s engine_id=%s%s", e.family().wire(), e.role().wire(), e.baseUrl(),
            e.identity().engineId(), aux.isEmpty() ? "" : " " + aux);
    }

    @Override
    public void close() {
        for (SimEngine e : engines) {
            e.stopBlocking();
        }
    }
}
