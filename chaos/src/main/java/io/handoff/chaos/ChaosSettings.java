package io.handoff.chaos;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What one run does: how many sessions it drives (or for how long at most), with how many concurrent clients, which
 * faults, and the timers that decide how soon what nobody releases must be gone.
 *
 * @param sessions      sessions the load starts (each operation starts one: a Generate, a participant or raw
 *                      allocation); the load stops at this count or at {@code maxLoadMs}
 * @param maxLoadMs     longest the load runs
 * @param workers       concurrent clients
 * @param leaseMs       the deployment's default lease (and the lease participant and raw sessions ask for)
 * @param holdMs        every engine's own timer on parked KV; also the deployment's maximum lease
 * @param killEveryMs   time between two kill -9 of a replica
 * @param faultEveryMs  time between two of the other faults
 * @param pauseMs       how long a paused replica stays stopped (longer than a lease)
 * @param redisPauseMs  how long a paused Redis stays stopped
 * @param gatewayOverrides configuration keys given to every replica last (e.g. to see a check fail with the reaper
 *                      turned off)
 */
record ChaosSettings(int sessions, long maxLoadMs, int workers, long leaseMs, long holdMs, long killEveryMs,
        long faultEveryMs, long pauseMs, long redisPauseMs, Set<Fault> faults, Path out, Path gatewayJar,
        String classPath, Map<String, String> gatewayOverrides) {

    enum Fault {
        REPLICA_KILL, REPLICA_PAUSE, REDIS_KILL, REDIS_PAUSE, ENGINE_CRASH, REPLICA_TERM, ENGINE_SLOW, ENGINE_CUT,
        REDIS_WIPE;

        static Fault parse(String s) {
            return valueOf(s.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        }
    }

    /** The run in the build: modest load (the machine is shared), every fault, well under three minutes. */
    static ChaosSettings shortRun(Path out, Path gatewayJar, String classPath) {
        return new ChaosSettings(600, 45_000, 4, 3000, 4000, 2000, 3000, 5000, 1500, EnumSet.allOf(Fault.class),
                out, gatewayJar, classPath, Map.of());
    }

    /** A replica's grace on SIGTERM ({@code handoff.stop.grace-period}): longer than any stream of the load. */
    static final long STOP_GRACE_MS = 5000;

    /** How long a SIGTERMed replica may take to exit: grace, the aborts' wait, Quarkus' own stop. */
    long termExitWithinMs() {
        return STOP_GRACE_MS + 2000 /* abort-timeout */ + 5000;
    }

    /** How long after the load stopped anything nobody released must be gone: lease, claim, engine hold, grace. */
    long settleMs() {
        return leaseMs + holdMs + 3000 /* cleanup claim */ + 10_000 /* grace: reaper periods, restarts */;
    }

    /** The deployment's configuration (every replica gets the same) for a fleet and a Redis. */
    Map<String, String> gatewayConfig(SimulatorFleet fleet, String redisUrl) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("quarkus.http.port", "0");
        c.put("quarkus.http.host", "127.0.0.1");
        c.put("quarkus.grpc.server.port", "0");
        c.put("quarkus.grpc.server.host", "127.0.0.1");
        c.put("quarkus.log.level", "INFO");
        c.put("handoff.store.kind", "redis");
        c.put("quarkus.redis.hosts", redisUrl);
        c.put("handoff.session.default-lease", leaseMs + "ms");
        c.put("handoff.session.max-lease", holdMs + "ms");
        c.put("handoff.session.tombstone-retention", "2h");
        c.put("handoff.reaper.period", "500ms");
        c.put("handoff.reaper.claim-ttl", "3s");
        c.put("handoff.reaper.retry-backoff", "1s");
        c.put("handoff.orchestration.keepalive-tick", "500ms");
        c.put("handoff.orchestration.abort-timeout", "2s");
        c.put("handoff.auth.admin-keys", HttpCalls.ADMIN_KEY);
        c.put("handoff.stop.grace-period", STOP_GRACE_MS + "ms");
        long holdSeconds = Math.max(1, holdMs / 1000);
        route(c, "vllm", fleet, "context-first", "context-first");
        c.put("handoff.routes.vllm.options.hold-mode", "fixed");
        c.put("handoff.routes.vllm.options.hold-seconds", Long.toString(holdSeconds));
        route(c, "sglang", fleet, "concurrent", "concurrent,generation-first");
        c.put("handoff.routes.sglang.options.bootstrap-port",
                Integer.toString(fleet.get("sglang", "prefill").auxPort()));
        c.put("handoff.routes.sglang.options.bootstrap-timeout-seconds", Long.toString(holdSeconds));
        c.put("handoff.routes.sglang.options.waiting-timeout-seconds", Long.toString(holdSeconds));
        route(c, "trtllm", fleet, "context-first", "context-first,generation-first");
        c.put("handoff.routes.trtllm.options.schedule-styles", "context-first,generation-first");
        c.put("handoff.routes.trtllm.options.kv-transfer-timeout-ms", Long.toString(holdMs));
        route(c, "openengine", fleet, "context-first", "context-first");
        c.put("handoff.routes.openengine.options.hold-seconds", Long.toString(holdSeconds));
        c.put("handoff.routes.openengine.options.abort-cleanup", "true");
        c.putAll(gatewayOverrides);
        return c;
    }

    private static void route(Map<String, String> c, String family, SimulatorFleet fleet, String defaultStyle,
            String styles) {
        String p = "handoff.routes." + family + ".";
        c.put(p + "model", "chaos-" + family);
        c.put(p + "engine-model", SimulatorFleet.MODEL);
        c.put(p + "family", family);
        c.put(p + "prefill", uri(fleet.get(family, "prefill")));
        c.put(p + "decode", uri(fleet.get(family, "decode")));
        c.put(p + "default-style", defaultStyle);
        c.put(p + "styles", styles);
        c.put(p + "decode-attempts", "1");
        c.put(p + "prefill-timeout", "10s");
        c.put(p + "decode-idle-timeout", "10s");
        c.put(p + "breaker-open-for", "2s");
    }

    private static String uri(SimulatorFleet.Engine e) {
        return e.grpcPort() > 0 ? "grpc://127.0.0.1:" + e.grpcPort() : e.url();
    }
}
