package io.handoff.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run: start Redis, the fleet and the replicas; run the load with the faults; stop the faults; settle; check.
 * Everything it started is stopped at the end, whatever happened.
 */
final class ChaosRun {

    private final ChaosSettings settings;

    ChaosRun(ChaosSettings settings) {
        this.settings = settings;
    }

    Verdict run() throws Exception {
        Path out = settings.out();
        clean(out);
        History history = new History();
        HttpCalls http = new HttpCalls(history);
        RedisStore redis = null;
        SimulatorFleet fleet = null;
        Replicas replicas = null;
        Verdict v = new Verdict();
        long t0 = System.currentTimeMillis();
        try {
            redis = startRedis(out);
            fleet = SimulatorFleet.start(settings.classPath(), out, settings.holdMs(), 5);
            replicas = new Replicas(3, settings.gatewayJar(), out, settings.gatewayConfig(fleet),
                    redis.gatewayEnvironment(), history);
            replicas.startAll();
            long startup = System.currentTimeMillis() - t0;
            v.note("redis: " + settings.redis().name().toLowerCase(Locale.ROOT) + ", "
                    + redis.gatewayEnvironment());
            log("up in " + startup + " ms: redis " + redis.gatewayEnvironment() + ", " + fleet.engines().size()
                    + " engines, 3 replicas; load of " + settings.sessions() + " sessions, " + settings.workers()
                    + " clients, faults " + settings.faults());

            FaultSchedule faults = new FaultSchedule(settings, replicas, redis, fleet, http, history);
            Workload load = new Workload(replicas, history, settings, http);
            AtomicInteger started = new AtomicInteger();
            long loadStart = System.currentTimeMillis();
            long loadEnd = loadStart + settings.maxLoadMs();
            faults.start();
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < settings.workers(); i++) {
                Thread w = new Thread(() -> {
                    while (System.currentTimeMillis() < loadEnd && started.incrementAndGet() <= settings.sessions()) {
                        if (!load.runOne()) {
                            started.decrementAndGet();
                        }
                    }
                }, "chaos-client-" + i);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            long loadMs = System.currentTimeMillis() - loadStart;
            faults.stop();
            Instant loadEndedAt = Instant.now();
            log("load done in " + loadMs + " ms; faults stopped; settling");
            replicas.awaitAllUp(120_000);
            int phaseCalls = load.reachEveryCancelPhase(fleet);

            v.figure("start-up (ms)", startup);
            v.figure("load (ms)", loadMs);
            v.figure("sessions started by the load", Math.min(started.get(), settings.sessions()));
            v.figure("operations in the history", history.ops().size());
            v.figure("calls after the load to give up in a phase it missed", phaseCalls);
            for (ChaosSettings.Fault f : settings.faults()) {
                v.figure("fault " + f.option(), faults.injected().get(f).get());
            }
            v.figure("replica processes started", replicas.generations());
            if (settings.redis() == ChaosSettings.RedisMode.CLUSTER) {
                v.must("Redis Cluster faults that failed or did not heal", 0, faults.clusterFaultsFailed());
            }
            outcomes(history, v);
            httpStyles(history, v);
            masterOutages(history, v);
            Terminations.check(history, replicas, settings.faults().contains(ChaosSettings.Fault.REPLICA_TERM), v);
            if (settings.faults().contains(ChaosSettings.Fault.REPLICA_PAUSE)) {
                faults.staleEpochProbe().check(v);
            }
            new Checks(settings, replicas, fleet, http, history, loadEndedAt).settleAndCheck(v);
            v.figure("whole run (ms)", System.currentTimeMillis() - t0);
        } finally {
            if (replicas != null) {
                replicas.stopAll();
            }
            if (fleet != null) {
                fleet.stop();
            }
            if (redis != null) {
                redis.stop();
            }
            history.dump(out.resolve("history.jsonl"));
            Files.writeString(out.resolve("figures.txt"), v.table());
        }
        return v;
    }

    /** One redis-server, or a Redis Cluster of six (three masters, three replicas), in a folder of the run's. */
    private RedisStore startRedis(Path out) throws IOException {
        if (settings.redis() == ChaosSettings.RedisMode.CLUSTER) {
            RedisClusterNodes cluster = new RedisClusterNodes(Files.createDirectories(out.resolve("redis")));
            try {
                cluster.start();
            } catch (RuntimeException | IOException e) {
                cluster.stop(); // the nodes that started, before the cluster could form
                throw e;
            }
            return cluster;
        }
        RedisNode node = new RedisNode(Files.createDirectories(out.resolve("redis")));
        node.start();
        return node;
    }

    /**
     * Removes what an earlier run left in the output folder (and only that: the folder may be the user's): its logs,
     * whose old lines would be read as this run's, and Redis's append-only file, which would bring its sessions back.
     */
    private static void clean(Path out) throws IOException {
        Files.createDirectories(out);
        Path redis = out.resolve("redis");
        if (Files.isDirectory(redis)) {
            try (var files = Files.walk(redis)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        try (var files = Files.list(out)) {
            for (Path p : files.toList()) {
                String name = p.getFileName().toString();
                if (name.endsWith(".log") || name.equals("history.jsonl") || name.equals("figures.txt")) {
                    Files.delete(p);
                }
            }
        }
    }

    /** How the operations ended, by kind of operation and outcome: figures only. */
    private static void outcomes(History history, Verdict v) {
        Map<String, Long> byOutcome = new TreeMap<>();
        for (History.Op op : history.ops()) {
            String kind = op.kind().startsWith("generate-") ? "generate" : op.kind();
            byOutcome.merge(kind + " -> " + op.outcome(), 1L, Long::sum);
        }
        byOutcome.forEach((k, n) -> v.note(String.format("  %-58s %6d", k, n)));
    }

    /** HTTP completions by the style their route gives them (each style has a route whose default it is). */
    private static void httpStyles(History history, Verdict v) {
        for (Workload.Flow f : Workload.FLOWS) {
            long n = history.ops().stream().filter(op -> op.kind().startsWith("http")
                    && op.detail().endsWith(HttpCalls.ON + f.httpModel())).count();
            v.figure("HTTP completions, " + f.family() + " " + Workload.styleName(f.style()), n);
        }
    }

    /** Outcomes of a call the store's absence refuses: an error, never a wrong answer. */
    private static final Set<String> REFUSED = Set.of("UNAVAILABLE", "status:UNAVAILABLE", "RESOURCE_EXHAUSTED",
            "status:RESOURCE_EXHAUSTED", "http-503");

    /**
     * The calls that ended while a killed master's slots had no master (from the kill until 2 s after its replica
     * took over, the client's slot cache included): how many were refused, how many answered. Figures only: a
     * refusal is what such an outage owes its callers; what the answers said is what the invariants check.
     */
    private static void masterOutages(History history, Verdict v) {
        List<History.StoreLoss> kills = history.storeLosses().stream().filter(History.StoreLoss::partial).toList();
        if (kills.isEmpty()) {
            return;
        }
        long refused = 0;
        long answered = 0;
        long outageMs = 0;
        for (History.StoreLoss k : kills) {
            outageMs = Math.max(outageMs, k.endMs() - k.startMs());
        }
        for (History.Op op : history.ops()) {
            boolean during = kills.stream().anyMatch(k -> op.endMs() >= k.startMs() && op.endMs() <= k.endMs() + 2000);
            if (during && REFUSED.contains(op.outcome())) {
                refused++;
            } else if (during) {
                answered++;
            }
        }
        v.figure("longest master kill to its replica's takeover (ms)", outageMs);
        v.figure("  calls ended from a master's kill to 2 s after takeover: refused", refused);
        v.figure("  calls ended from a master's kill to 2 s after takeover: otherwise", answered);
    }

    static void log(String line) {
        System.out.println("[chaos] " + line);
    }
}
