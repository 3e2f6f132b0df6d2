package io.handoff.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time of named processes over a window, read from {@code /proc/<pid>/stat} (Linux only; a process that cannot
 * be read is reported as unknown). Shows which of gateway, Redis and driver is using the machine's cores.
 */
final class CpuWatch {

    static final String MACHINE = "machine total";

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
        pids.forEach((name, pid) -> startTicks.put(name, ticks(pid)));
        startTicks.put(MACHINE, machineBusyTicks());
    }

    /** Cores busy per process over the window (1.0 = one core fully used); -1 when unknown. */
    Map<String, Double> stop() {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        Map<String, Double> cores = new LinkedHashMap<>();
        pids.forEach((name, pid) -> {
            long before = startTicks.getOrDefault(name, -1L);
            long after = ticks(pid);
            cores.put(name, before < 0 || after < 0 ? -1.0 : (after - before) / (double) ticksPerSecond / seconds);
        });
        long before = startTicks.getOrDefault(MACHINE, -1L);
        long after = machineBusyTicks();
        if (before >= 0 && after >= 0) {
            double machine = (after - before) / (double) ticksPerSecond / seconds;
            double ours = cores.values().stream().filter(c -> c >= 0).mapToDouble(Double::doubleValue).sum();
            cores.put("other processes", Math.max(0, machine - ours));
            cores.put(MACHINE, machine);
        }
        return cores;
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
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // Fields after the command name, which is in parentheses and may contain spaces.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
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
