package io.handoff.simulator;

import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One prefill and one decode engine of each family on consecutive ports, sharing one {@link SimClock}:
 * base+0 vLLM prefill, +1 vLLM decode, +2 SGLang prefill, +3 SGLang decode, +4 TensorRT-LLM context, +5 TensorRT-LLM
 * generation; with the openengine family asked for, +6 openengine prefill and +7 openengine decode (their gRPC servers on
 * base+200+i). Auxiliary servers (NIXL side channel, SGLang bootstrap, TRT-LLM transceiver, openengine KV transfer) get
 * base+100+i. With base 0 every port is picked free.
 */
public final class SimFleet implements AutoCloseable {
    private final List<SimEngine> engines = new ArrayList<>();

    private SimFleet() {
    }

    /** The families a fleet runs when none are named: the three HTTP families (six engines). */
    /** An engine's auxiliary server listens this far above its HTTP port; an openengine's gRPC, {@value #GRPC_PORT_OFFSET}. */
    public static final int AUX_PORT_OFFSET = 100;
    public static final int GRPC_PORT_OFFSET = 200;
    public static final List<Family> DEFAULT_FAMILIES = List.of(Family.VLLM, Family.SGLANG, Family.TRTLLM);

    /**
     * Starts the fleet of the {@link #DEFAULT_FAMILIES}.
     *
     * @param options engine options applied to every engine where the family knows them (e.g. model, kv-blocks)
     */
    public static SimFleet start(Vertx vertx, int basePort, Map<String, String> options) {
        return start(vertx, basePort, options, DEFAULT_FAMILIES);
    }

    /**
     * Starts one prefill and one decode engine of each family named. Ports depend on the family, not on which others
     * run, so that a family keeps its ports whatever the selection.
     */
    public static SimFleet start(Vertx vertx, int basePort, Map<String, String> options, List<Family> families) {
        SimFleet fleet = new SimFleet();
        SimClock clock = new SimClock();
        for (Family f : Family.values()) {
            if (!families.contains(f)) {
                continue;
            }
            int i = f.ordinal() * 2;
            for (Role r : new Role[] {Role.PREFILL, Role.DECODE}) {
                EngineConfig c = Engines.config(f);
                options.forEach(c::apply);
                c.role = r;
                c.clock = clock;
                c.port = basePort == 0 ? 0 : basePort + i;
                if (basePort != 0) {
                    String aux = String.valueOf(basePort + AUX_PORT_OFFSET + i);
                    c.apply(auxPortOption(f), aux);
                    if (f == Family.OPENENGINE) {
                        c.apply("grpc-port", String.valueOf(basePort + GRPC_PORT_OFFSET + i));
                    }
                }
                fleet.engines.add(Engines.create(c).startBlocking(vertx));
                i++;
            }
        }
        return fleet;
    }

    /**
     * Every port a fleet of these families started on {@code basePort} listens on, in order: each engine's HTTP API,
     * then its auxiliary server, then (openengine) its gRPC server.
     */
    public static List<Integer> ports(int basePort, List<Family> families) {
        List<Integer> ports = new ArrayList<>();
        for (int offset : new int[] {0, AUX_PORT_OFFSET, GRPC_PORT_OFFSET}) {
            for (Family f : Family.values()) {
                if (families.contains(f) && (offset != GRPC_PORT_OFFSET || f == Family.OPENENGINE)) {
                    ports.add(basePort + offset + f.ordinal() * 2);
                    ports.add(basePort + offset + f.ordinal() * 2 + 1);
                }
            }
        }
        return ports;
    }

    private static String auxPortOption(Family f) {
        switch (f) {
            case VLLM:
                return "side-channel-port";
            case SGLANG:
                return "bootstrap-port";
            case OPENENGINE:
                return "kv-transfer-port";
            default:
                return "transceiver-port";
        }
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
        for (String name : new String[] {"side_channel", "bootstrap", "transceiver", "kv_transfer"}) {
            if (e.auxPort(name) > 0) {
                aux.put(name, e.auxPort(name));
            }
        }
        if (e instanceof OpenEngineSimEngine) {
            aux.put("grpc", ((OpenEngineSimEngine) e).grpcPort());
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
