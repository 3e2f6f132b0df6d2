package io.handoff.chaos;

import io.handoff.chaos.ChaosSettings.Fault;
import io.handoff.chaos.ChaosSettings.RedisMode;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Runs the harness from the command line (see {@code chaos/run-chaos.sh}) and exits 1 when an invariant broke.
 *
 * <pre>
 *   ChaosMain --gateway-jar gateway/target/quarkus-app/quarkus-run.jar --out chaos/target/chaos-long
 *             [--sessions 10000] [--max-load-seconds 900] [--workers 6] [--redis single|cluster]
 *             [--faults replica-kill,redis-pause,...] (default: every fault of the topology)
 *             [--kill-every-ms 2000] [--fault-every-ms 3000] [--gateway-option handoff.reaper.enabled=false]
 * </pre>
 */
public final class ChaosMain {

    private ChaosMain() {
    }

    public static void main(String[] args) throws Exception {
        ChaosSettings base = ChaosSettings.shortRun(Path.of("chaos/target/chaos"),
                Path.of("gateway/target/quarkus-app/quarkus-run.jar"), System.getProperty("java.class.path"));
        int sessions = base.sessions();
        long maxLoadMs = base.maxLoadMs();
        int workers = base.workers();
        long killEvery = base.killEveryMs();
        long faultEvery = base.faultEveryMs();
        Set<Fault> faults = null; // every fault of the topology unless --faults names them
        RedisMode redis = RedisMode.SINGLE;
        Path out = base.out();
        Path jar = base.gatewayJar();
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--sessions" -> sessions = Integer.parseInt(value);
                case "--max-load-seconds" -> maxLoadMs = Long.parseLong(value) * 1000;
                case "--workers" -> workers = Integer.parseInt(value);
                case "--kill-every-ms" -> killEvery = Long.parseLong(value);
                case "--fault-every-ms" -> faultEvery = Long.parseLong(value);
                case "--redis" -> redis = parse(() -> RedisMode.parse(value));
                case "--faults" -> {
                    faults = EnumSet.noneOf(Fault.class);
                    for (String f : value.split(",")) {
                        if (!f.isBlank() && !f.equals("none")) {
                            faults.add(parse(() -> Fault.parse(f)));
                        }
                    }
                }
                case "--out" -> out = Path.of(value);
                case "--gateway-jar" -> jar = Path.of(value);
                case "--gateway-option" -> {
                    int eq = value.indexOf('=');
                    if (eq <= 0) {
                        System.err.println("--gateway-option takes key=value, not " + value);
                        System.exit(2);
                    }
                    overrides.put(value.substring(0, eq), value.substring(eq + 1));
                }
                default -> {
                    System.err.println("unknown option " + args[i] + "\n" + usage());
                    System.exit(2);
                }
            }
        }
        ChaosSettings settings;
        try {
            settings = new ChaosSettings(sessions, maxLoadMs, workers, base.leaseMs(), base.holdMs(), killEvery,
                    faultEvery, base.pauseMs(), base.redisPauseMs(), redis, faults == null ? Fault.all(redis) : faults,
                    out.toAbsolutePath(), jar.toAbsolutePath(), base.classPath(), overrides);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "\n" + usage());
            System.exit(2);
            return;
        }
        Verdict v = new ChaosRun(settings).run();
        System.out.println(v.table());
        System.out.println(v.holds() ? "every invariant held" : "BROKEN: " + v.broken());
        System.exit(v.holds() ? 0 : 1);
    }

    /** An option's value, or the usage and exit 2 when it is not one (before anything was started). */
    private static <T> T parse(Supplier<T> value) {
        try {
            return value.get();
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "\n" + usage());
            System.exit(2);
            throw e;
        }
    }

    private static String usage() {
        return "options: --sessions N --max-load-seconds S --workers N --kill-every-ms MS --fault-every-ms MS"
                + " --redis single|cluster"
                + " --faults replica-kill,replica-pause,redis-kill,redis-kill-empty,redis-pause,engine-crash,"
                + "replica-term,engine-slow,"
                + "engine-cut,redis-wipe,redis-failover,redis-master-kill|none --out DIR"
                + " --gateway-jar JAR --gateway-option key=value (repeatable)";
    }
}
