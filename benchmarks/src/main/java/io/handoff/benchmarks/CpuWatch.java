package io.handoff.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time of named processes over a window, read from {@code /proc/<pid>/stat} (Linux only; a process that cannot
 * be read is reported as unknown). Shows which of gateway, Redis and driver is using the machine's cores. For a JVM
 * it also reports, as a part of the process's figure, what its JIT compiler threads used: on a shared 2-core machine
 * compilation can take a large share for minutes, and that is warm-up, not the cost of a request.
 */
final class CpuWatch {

    static final String MACHINE = "machine total";
    static final String JIT = " (JIT threads)";

    private final Map<String, Long> pids = new LinkedHashMap<>();
    private final Map<String, Long> startTicks = new LinkedHashMap<>();
    private final long ticksPerSecond;
    private long startNanos;

    CpuWatch(Map<String, Long> watched) {
        pids.put("driver", ProcessHandle.current().pid());
        pids.putAll(watched);
        this.ticksPerSecond = clockTicks();
    }

    void start() {
        startNanos = System.nanoTime();
        pids.forEach((name, pid) -> {
            startTicks.put(name, ticks(pid));
            startTicks.put(name + JIT, jitTicks(pid));
        });
        startTicks.put(MACHINE, machineBusyTicks());
    }

    /**
     * Cores busy per process over the window (1.0 = one core fully used); -1 when unknown. A process's JIT share
     * follows it as "<name> (JIT threads)" when it has compiler threads; it is part of the process, not added.
     */
    Map<String, Double> stop() {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        Map<String, Double> cores = new LinkedHashMap<>();
        double ours = 0;
        for (Map.Entry<String, Long> p : pids.entrySet()) {
            String name = p.getKey();
            double c = cores(startTicks.getOrDefault(name, -1L), ticks(p.getValue()), seconds);
            cores.put(name, c);
            ours += Math.max(0, c);
            long jitBefore = startTicks.getOrDefault(name + JIT, -1L);
            if (jitBefore > 0) { // a JVM that has run at all has compiled something; Redis has no such threads
                cores.put(name + JIT, cores(jitBefore, jitTicks(p.getValue()), seconds));
            }
        }
        long before = startTicks.getOrDefault(MACHINE, -1L);
        long after = machineBusyTicks();
        if (before >= 0 && after >= 0) {
            double machine = (after - before) / (double) ticksPerSecond / seconds;
            cores.put("other processes", Math.max(0, machine - ours));
            cores.put(MACHINE, machine);
        }
        return cores;
    }

    private double cores(long before, long after, double seconds) {
        return before < 0 || after < 0 ? -1.0 : (after - before) / (double) ticksPerSecond / seconds;
    }

    /** Busy (non-idle, non-iowait) ticks of all CPUs together, from the first line of /proc/stat. */
    private static long machineBusyTicks() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = first.trim().split("\\s+");
            long busy = 0;
            // cpu user nice system idle iowait irq softirq steal ...: skip idle (4) and iowait (5); guest is in user.
            for (int i = 1; i <= Math.min(8, f.length - 1); i++) {
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long ticks(long pid) {
        return statTicks(Path.of("/proc/" + pid + "/stat"));
    }

    /** User+system ticks of the process's threads named "C1 CompilerThread<n>" / "C2 CompilerThread<n>" (HotSpot). */
    private static long jitTicks(long pid) {
        long sum = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks) {
                String comm;
                try {
                    comm = Files.readString(task.resolve("comm"));
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
                    long t = statTicks(task.resolve("stat"));
                    sum += Math.max(0, t);
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long statTicks(Path stat) {
        try {
            String line = Files.readString(stat);
            // Fields after the command name, which is in parentheses and may contain spaces.
            String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
            // utime and stime are fields 14 and 15 of the whole line, so 11 and 12 here (0-based, from field 3).
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            p.waitFor();
            return Long.parseLong(out);
        } catch (Exception e) {
            return 100;
        }
    }
}
