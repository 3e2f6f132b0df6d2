package io.handoff.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Load driver for the gateway's KV session lifecycle (allocate -> renew -> release over gRPC) against a running
 * gateway with the Redis store, next to the bare Redis round trip of one session transition script.
 *
 * <p>Order of a run: phase B first, because it also warms both JVMs ({@code --warmup-seconds} of concurrent
 * lifecycles, unrecorded, while the main thread runs bare scripts; then {@code --seconds} recorded), then phase A
 * on warm JVMs (one in flight: sequential lifecycles interleaved with sequential bare transition scripts and gRPC
 * floor probes, {@code --latency-seconds}). The report prints phase A first.
 */
public final class SessionLifecycleBenchmark {

    /** The session service's aims in issue 12: at least this many lifecycles/s, Allocate within this of a bare script. */
    static final double TARGET_LIFECYCLES_PER_SECOND = 5_000;
    static final double TARGET_RATIO = 2.0;

    private SessionLifecycleBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        int status = run(options, commandLine(args));
        System.exit(status);
    }

    static int run(Options o, String commandLine) throws Exception {
        Locale.setDefault(Locale.ROOT);
        System.out.println("== Handoff KV session lifecycle benchmark ==");
        System.out.println("command: " + commandLine);
        try (BareTransitionScript bare = new BareTransitionScript(o.redis(), o.transitionScript(),
                o.createScript());
             GrpcLifecycles grpc = new GrpcLifecycles(o.gateway(), o.channels(), o.rpcDeadline())) {
            // Interrupted (Ctrl-C, TERM): still delete this run's keys, so a shared Redis is left as it was.
            Thread onExit = new Thread(() -> {
                try {
                    bare.cleanUp();
                } catch (Exception ignored) {
                    // best effort while the JVM is going down
                }
            }, "bench-cleanup");
            Runtime.getRuntime().addShutdownHook(onExit);
            String redisVersion = bare.redisVersion();
            System.out.printf("machine: %d CPUs, Java %s (%s), Redis %s%n", Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"), System.getProperty("java.vm.name"), redisVersion);
            System.out.printf("gateway: %s   redis: %s   script: %s%n", o.gateway(), o.redis(),
                    o.transitionScript());
            try {
                return measure(o, bare, grpc);
            } finally {
                long deleted = bare.cleanUp();
                System.out.printf("cleanup: deleted %d keys under %s:*%n", deleted, bare.prefix());
                Runtime.getRuntime().removeShutdownHook(onExit);
            }
        }
    }

    private static int measure(Options o, BareTransitionScript bare, GrpcLifecycles grpc) throws Exception {
        ErrorLog probe = new ErrorLog("probe");
        if (!grpc.sequential(null, probe)) {
            System.out.println("the gateway at " + o.gateway() + " did not complete a lifecycle: " + probe.kept());
            return 1;
        }

        // Phase B, with its warm-up: --concurrency lifecycles in flight. During the warm-up (nothing recorded) the
        // main thread also runs bare scripts and gRPC floor probes, so every path phase A times is compiled too.
        ErrorLog bErrors = new ErrorLog("phase B");
        GrpcLifecycles.Recorders b = new GrpcLifecycles.Recorders();
        GrpcLifecycles.Load load = grpc.new Load(o.concurrency(), b, bErrors);
        load.start();
        long warmStart = System.nanoTime();
        long warmUntil = warmStart + o.warmup().toNanos();
        List<Long> warmTrace = new ArrayList<>();
        long nextTick = warmStart + 1_000_000_000L;
        long warmSeen = 0;
        while (System.nanoTime() < warmUntil) {
            if (System.nanoTime() >= nextTick) {
                long total = load.completedTotal();
                warmTrace.add(total - warmSeen);
                warmSeen = total;
                nextTick += 1_000_000_000L;
            }
            try {
                bare.transitionToReady(bare.createSession());
            } catch (Exception e) {
                bErrors.add("transition.lua", e);
            }
            grpc.grpcFloor(bErrors);
        }
        CpuWatch cpu = new CpuWatch(o.watch());
        cpu.start();
        long bStart = System.nanoTime();
        load.recording(true);
        List<Long> perSecondTrace = new ArrayList<>();
        long bUntil = bStart + o.seconds().toNanos();
        long seen = 0;
        for (long tick = bStart + 1_000_000_000L; ; tick += 1_000_000_000L) {
            long wake = Math.min(tick, bUntil);
            long wait = wake - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            if (wake == tick) {
                long now = load.completedWhileRecording();
                perSecondTrace.add(now - seen);
                seen = now;
            }
            if (wake >= bUntil) {
                break;
            }
        }
        load.recording(false);
        double bSeconds = (System.nanoTime() - bStart) / 1e9;
        Map<String, Double> cores = cpu.stop();
        boolean drained = load.stop(Duration.ofSeconds(30));
        long lifecycles = load.completedWhileRecording();
        double perSecond = lifecycles / bSeconds;

        // Phase A: one request in flight at a time, on JVMs that are warm by now. Sequential lifecycles interleaved
        // with bare transition scripts and gRPC floor probes, so all three see the same conditions. One second of
        // the same loop goes unrecorded first, to let the machine settle after phase B.
        ErrorLog aErrors = new ErrorLog("phase A");
        GrpcLifecycles.Recorders a = new GrpcLifecycles.Recorders();
        LatencyRecorder script = new LatencyRecorder("transition.lua (bare EVALSHA)");
        LatencyRecorder floor = new LatencyRecorder("GetKvSession without store");
        sequentialLoop(bare, grpc, Duration.ofSeconds(1), null, null, null, aErrors);
        CpuWatch aCpu = new CpuWatch(o.watch());
        aCpu.start();
        long aStart = System.nanoTime();
        long aLifecycles = sequentialLoop(bare, grpc, o.latency(), a, script, floor, aErrors);
        double aSeconds = (System.nanoTime() - aStart) / 1e9;
        Map<String, Double> aCores = aCpu.stop();

        Percentiles.Summary allocA = a.allocate.summary();
        Percentiles.Summary bareA = script.summary();
        double ratio = bareA.p50() == 0 ? Double.NaN : (double) allocA.p50() / bareA.p50();

        System.out.println();
        System.out.printf("Phase A - one in flight, %.1f s: %d lifecycles, %d bare scripts, errors %d%n", aSeconds,
                aLifecycles, bareA.count(), aErrors.count());
        printTable(List.of(row("AllocateKvSession (gRPC)", allocA), row("RenewKvSession (gRPC)", a.renew.summary()),
                row("ReleaseKvSession (gRPC)", a.release.summary()), row("transition.lua bare EVALSHA", bareA),
                row("GetKvSession, no store (gRPC floor)", floor.summary())));
        System.out.printf("ratio Allocate p50 / bare transition p50 = %.2f   (target <= %.0f: %s)%n", ratio,
                TARGET_RATIO, ratio <= TARGET_RATIO ? "MET" : "MISSED");
        System.out.println(cpuLine(aCores));

        System.out.println();
        System.out.printf("Phase B - concurrency %d over %d channel(s), %.0f s warm-up then %.1f s measured (ran first)%n",
                o.concurrency(), o.channels(), o.warmup().toMillis() / 1000.0, bSeconds);
        printTable(List.of(row("AllocateKvSession (gRPC)", b.allocate.summary()),
                row("RenewKvSession (gRPC)", b.renew.summary()), row("ReleaseKvSession (gRPC)", b.release.summary())));
        System.out.printf("lifecycles/s = %.0f   (%d lifecycles; target >= %.0f: %s)%n", perSecond, lifecycles,
                TARGET_LIFECYCLES_PER_SECOND, perSecond >= TARGET_LIFECYCLES_PER_SECOND ? "MET" : "MISSED");
        System.out.println("lifecycles completed in each second: " + perSecondTrace);
        System.out.println("  (warm-up, for comparison: " + warmTrace + ")");
        System.out.printf("errors (warm-up, measured and drain) = %d%s%n", bErrors.count(), drained ? "" : "   (in-flight lifecycles did not drain)");
        System.out.println(cpuLine(cores));
        for (ErrorLog log : List.of(aErrors, bErrors)) {
            log.kept().forEach(e -> System.out.println("  error: " + e));
        }
        System.out.println();
        System.out.printf("RESULT concurrency=%d channels=%d lifecycles_per_s=%.0f ratio=%.2f errors=%d "
                + "a_alloc_p50_ms=%.3f a_bare_p50_ms=%.3f a_floor_p50_ms=%.3f b_alloc_p50_ms=%.3f b_alloc_p99_ms=%.3f%n",
                o.concurrency(), o.channels(), perSecond, ratio, aErrors.count() + bErrors.count(),
                allocA.p50Millis(), bareA.p50Millis(), floor.summary().p50Millis(), b.allocate.summary().p50Millis(),
                b.allocate.summary().p99Millis());
        return aErrors.count() + bErrors.count() == 0 && drained ? 0 : 1;
    }

    /** Phase A's loop; null recorders mean "run but do not record". Answers the lifecycles completed. */
    private static long sequentialLoop(BareTransitionScript bare, GrpcLifecycles grpc, Duration duration,
            GrpcLifecycles.Recorders recorders, LatencyRecorder script, LatencyRecorder floor, ErrorLog errors) {
        long until = System.nanoTime() + duration.toNanos();
        long lifecycles = 0;
        while (System.nanoTime() < until) {
            if (grpc.sequential(recorders, errors)) {
                lifecycles++;
            }
            try {
                String id = bare.createSession();
                long t = bare.transitionToReady(id);
                if (script != null) {
                    script.record(t);
                }
            } catch (Exception e) {
                errors.add("transition.lua", e);
            }
            long f = grpc.grpcFloor(errors);
            if (f >= 0 && floor != null) {
                floor.record(f);
            }
        }
        return lifecycles;
    }

    private static String cpuLine(Map<String, Double> cores) {
        StringBuilder line = new StringBuilder("cpu in this window, cores busy of "
                + Runtime.getRuntime().availableProcessors() + ":");
        cores.forEach((name, c) -> line.append(String.format("  %s %s", name,
                c < 0 ? "n/a" : String.format("%.2f", c))));
        return line.toString();
    }

    private static String[] row(String name, Percentiles.Summary s) {
        return new String[] {name, Long.toString(s.count()), String.format("%.3f", s.p50Millis()),
                String.format("%.3f", s.p99Millis()), String.format("%.3f", s.maxMillis())};
    }

    private static void printTable(List<String[]> rows) {
        List<String[]> all = new ArrayList<>();
        all.add(new String[] {"operation", "count", "p50 ms", "p99 ms", "max ms"});
        all.addAll(rows);
        Table.print(all);
    }

    private static String commandLine(String[] args) {
        return ProcessHandle.current().info().commandLine()
                .orElseGet(() -> "java -jar handoff-benchmarks.jar " + String.join(" ", args));
    }
}
