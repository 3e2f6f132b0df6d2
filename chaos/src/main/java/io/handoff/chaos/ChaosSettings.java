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
 * @param redis         one redis-server, or a Redis Cluster of three masters with a replica each
 * @param gatewayOverrides configuration keys given to every replica last (e.g. to see a check fail with the reaper
 *                      turned off)
 */
record ChaosSettings(int sessions, long maxLoadMs, int workers, long leaseMs, long holdMs, long killEveryMs,
        long faultEveryMs, long pauseMs, long redisPauseMs, RedisMode redis, Set<Fault> faults, Path out,
        Path gatewayJar, String classPath, Map<String, String> gatewayOverrides) {

    /** The Redis under the replicas: {@code --redis single|cluster}. */
    enum RedisMode {
        SINGLE, CLUSTER;

        static RedisMode parse(String s) {
            for (RedisMode m : values()) {
                if (m.name().equalsIgnoreCase(s.trim())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--redis takes single or cluster, not '" + s + "'");
        }
    }

    enum Fault {
        REPLICA_KILL, REPLICA_PAUSE, REDIS_KILL(RedisMode.SINGLE), REDIS_KILL_EMPTY(RedisMode.SINGLE),
        REDIS_PAUSE(RedisMode.SINGLE), ENGINE_CRASH,
        REPLICA_TERM, ENGINE_SLOW, ENGINE_CUT, REDIS_WIPE, REDIS_FAILOVER(RedisMode.CLUSTER),
        REDIS_MASTER_KILL(RedisMode.CLUSTER);

        /** The Redis topologies the fault applies to: a Cluster has no one process to kill or pause as a whole. */
        private final Set<RedisMode> modes;

        Fault() {
            this.modes = EnumSet.allOf(RedisMode.class);
        }

        Fault(RedisMode only) {
            this.modes = EnumSet.of(only);
        }

        boolean appliesTo(RedisMode mode) {
            return modes.contains(mode);
        }

        String option() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        static Fault parse(String s) {
            for (Fault f : values()) {
                if (f.option().equals(s.trim())) {
                    return f;
                }
            }
            throw new IllegalArgumentException("no fault '" + s + "'; the faults are " + EnumSet.allOf(Fault.class)
                    .stream().map(Fault::option).toList());
        }

        /** Every fault that applies to {@code mode}. */
        static Set<Fault> all(RedisMode mode) {
            Set<Fault> all = EnumSet.noneOf(Fault.class);
            for (Fault f : values()) {
                if (f.appliesTo(mode)) {
                    all.add(f);
                }
            }
            return all;
        }
    }

    ChaosSettings {
        for (Fault f : faults) {
            if (!f.appliesTo(redis)) {
                throw new IllegalArgumentException("the fault " + f.option() + " needs --redis "
                        + (redis == RedisMode.SINGLE ? "cluster" : "single"));
            }
        }
    }

    /** The run in the build: modest load (the machine is shared), every fault, well under three minutes. */
    static ChaosSettings shortRun(Path out, Path gatewayJar, String classPath) {
        return new ChaosSettings(600, 45_000, 4, 3000, 4000, 2000, 3000, 5000, 1500, RedisMode.SINGLE,
                Fault.all(RedisMode.SINGLE), out, gatewayJar, classPath, Map.of());
    }

    /**
     * The Cluster run in the build: 25 s of load on a Redis Cluster (bound by time, not by a count of sessions, so
     * that the faults' timer always meets the first failover at about 3 s and the first master's kill at about 6 s),
     * the replica kills, and in turn a graceful failover, a master's kill, an engine crash and streams cut.
     */
    static ChaosSettings clusterShortRun(Path out, Path gatewayJar, String classPath) {
        return new ChaosSettings(10_000, 25_000, 4, 3000, 4000, 2000, 3000, 5000, 1500, RedisMode.CLUSTER,
                EnumSet.of(Fault.REPLICA_KILL, Fault.REDIS_FAILOVER, Fault.REDIS_MASTER_KILL, Fault.ENGINE_CRASH,
                        Fault.ENGINE_CUT), out, gatewayJar, classPath, Map.of());
    }

    /** A replica's grace on SIGTERM ({@code handoff.stop.grace-period}): longer than any stream of the load. */
    static final long STOP_GRACE_MS = 5000;

    /** How long a replica holds a cleanup ({@code handoff.reaper.claim-ttl}): short, so that takeovers happen. */
    static final long CLAIM_TTL_MS = 3000;

    /** The longest engine call of a discharge ({@code handoff.reaper.discharge-timeout}): at most half the claim. */
    static final long DISCHARGE_TIMEOUT_MS = 1000;

    /** How long a SIGTERMed replica may take to exit: grace, the aborts' wait, Quarkus' own stop. */
    long termExitWithinMs() {
        return STOP_GRACE_MS + 2000 /* abort-timeout */ + 5000;
    }

    /** How long after the load stopped anything nobody released must be gone: lease, claim, engine hold, grace. */
    long settleMs() {
        return leaseMs + holdMs + 3000 /* cleanup claim */ + 10_000 /* grace: reaper periods, restarts */;
    }

    /**
     * The deployment's configuration (every replica gets the same) for a fleet; the store's address comes in the
     * environment ({@link RedisStore#gatewayEnvironment()}).
     */
    Map<String, String> gatewayConfig(SimulatorFleet fleet) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("quarkus.http.port", "0");
        c.put("quarkus.http.host", "127.0.0.1");
        c.put("quarkus.grpc.server.port", "0");
        c.put("quarkus.grpc.server.host", "127.0.0.1");
        c.put("quarkus.log.level", "INFO");
        c.put("handoff.store.kind", "redis");
        c.put("handoff.session.default-lease", leaseMs + "ms");
        c.put("handoff.session.max-lease", holdMs + "ms");
        c.put("handoff.session.tombstone-retention", "2h");
        c.put("handoff.reaper.period", "500ms");
        c.put("handoff.reaper.claim-ttl", CLAIM_TTL_MS + "ms");
        c.put("handoff.reaper.discharge-timeout", DISCHARGE_TIMEOUT_MS + "ms");
        c.put("handoff.reaper.retry-backoff", "1s");
        c.put("handoff.orchestration.keepalive-tick", "500ms");
        c.put("handoff.orchestration.abort-timeout", "2s");
        c.put("handoff.auth.admin-keys", HttpCalls.ADMIN_KEY);
        c.put("handoff.stop.grace-period", STOP_GRACE_MS + "ms");
        route(c, "vllm", "vllm", fleet, "context-first", "context-first");
        route(c, "sglang", "sglang", fleet, "concurrent", "concurrent,generation-first");
        route(c, "trtllm", "trtllm", fleet, "context-first", "context-first,generation-first");
        route(c, "openengine", "openengine", fleet, "context-first", "context-first");
        // the OpenAI front cannot name a style: every other style a family supports has a route (and a model) whose
        // default it is, on the same engines, so that HTTP covers every style as gRPC does
        for (Workload.Flow f : Workload.FLOWS) {
            if (!f.isDefaultStyle()) {
                String style = Workload.styleName(f.style());
                route(c, f.route(), f.family(), fleet, style, style);
            }
        }
        c.putAll(gatewayOverrides);
        return c;
    }

    private void route(Map<String, String> c, String name, String family, SimulatorFleet fleet,
            String defaultStyle, String styles) {
        String p = "handoff.routes." + name + ".";
        c.put(p + "model", "chaos-" + name);
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
        long holdSeconds = Math.max(1, holdMs / 1000);
        switch (family) {
            case "vllm" -> {
                c.put(p + "options.hold-mode", "fixed");
                c.put(p + "options.hold-seconds", Long.toString(holdSeconds));
            }
            case "sglang" -> {
                c.put(p + "options.bootstrap-port", Integer.toString(fleet.get("sglang", "prefill").auxPort()));
                c.put(p + "options.bootstrap-timeout-seconds", Long.toString(holdSeconds));
                c.put(p + "options.waiting-timeout-seconds", Long.toString(holdSeconds));
            }
            case "trtllm" -> {
                c.put(p + "options.schedule-styles", "context-first,generation-first");
                c.put(p + "options.kv-transfer-timeout-ms", Long.toString(holdMs));
            }
            case "openengine" -> {
                c.put(p + "options.hold-seconds", Long.toString(holdSeconds));
                c.put(p + "options.abort-cleanup", "true");
            }
            default -> throw new IllegalArgumentException(family);
        }
    }

    private static String uri(SimulatorFleet.Engine e) {
        return e.grpcPort() > 0 ? "grpc://127.0.0.1:" + e.grpcPort() : e.url();
    }
}
