package io.handoff.simulator;

import io.vertx.core.Vertx;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs simulated engines from the command line.
 *
 * <pre>
 *   SimulatorMain --family vllm --role prefill --port 8100 [--mode lease] [--kv-blocks 4096] ...
 *   SimulatorMain --family openengine --role decode --port 8106 --grpc-port 8306
 *   SimulatorMain --fleet [--port 8100] [--families vllm,sglang,trtllm,openengine] [options for every engine]
 * </pre>
 *
 * Options are the {@code --name value} fields documented on {@link EngineConfig} and the family configs; a flag
 * without a value means {@code true}.
 */
public final class SimulatorMain {
    private SimulatorMain() {
    }

    public static void main(String[] args) {
        Map<String, String> opts = parse(args);
        if (opts.containsKey("help") || opts.isEmpty()) {
            System.out.println("usage: SimulatorMain --family vllm|sglang|trtllm|openengine --role prefill|decode|both "
                + "--port N [options]\n       SimulatorMain --fleet [--port BASE] [--families vllm,sglang,trtllm,openengine]"
                + " [options]\n"
                + "see engine-connectors/simulator/README.md for the options");
            return;
        }
        loadTimeZoneRules();
        Vertx vertx = Vertx.vertx();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> vertx.close()));
        try {
            if (opts.remove("fleet") != null) {
                int base = Integer.parseInt(opts.getOrDefault("port", "8100"));
                opts.remove("port");
                String names = opts.remove("families");
                List<Family> families = SimFleet.DEFAULT_FAMILIES;
                if (names != null) {
                    families = new ArrayList<>();
                    for (String n : names.split(",")) {
                        families.add(Family.parse(n.trim()));
                    }
                }
                SimFleet fleet = SimFleet.start(vertx, base, opts, families);
                System.out.println("handoff simulator fleet up:");
                fleet.describe().forEach(l -> System.out.println("  " + l));
            } else {
                String family = opts.remove("family");
                if (family == null) {
                    throw new IllegalArgumentException("--family is required (or --fleet)");
                }
                SimEngine e = Engines.create(Family.parse(family), opts).startBlocking(vertx);
                System.out.println("handoff simulator up: " + SimFleet.describe(e));
            }
        } catch (RuntimeException e) {
            System.err.println("simulator: " + e.getMessage());
            vertx.close();
            System.exit(2);
        }
    }

    /**
     * The JDK reads its time-zone rules from a file the first time a log line or a date needs them. Read when every
     * descriptor is taken by open streams, that read fails and leaves the rules unusable for the rest of the process
     * (every later log line and HTTP date then throws), so they are read here, before any stream is open.
     */
    private static void loadTimeZoneRules() {
        ZoneRulesProvider.getAvailableZoneIds();
        ZonedDateTime.now(ZoneId.systemDefault());
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String name = a.substring(2);
            String value = "true";
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                value = args[++i];
            }
            out.put(name, value);
        }
        return out;
    }
}
