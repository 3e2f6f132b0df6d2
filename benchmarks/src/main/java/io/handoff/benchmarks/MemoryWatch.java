package io.handoff.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Memory of named processes: the resident set from {@code /proc/<pid>/status} (Linux), and for one JVM the heap it
 * still uses after a full collection, asked of it with {@code jcmd} (the JDK's own tool, beside the driver's
 * {@code java}). The heap after a full collection is what the open streams keep alive; the heap at any other moment
 * is mostly garbage not yet collected. A figure that cannot be read is -1.
 */
final class MemoryWatch {

    private static final Pattern VM_RSS = Pattern.compile("VmRSS:\\s+(\\d+) kB");
    /**
     * The heap line of {@code GC.heap_info}: G1's "garbage-first heap   total 262144K, used 53445K", or ZGC's
     * "ZHeap           used 132M, capacity 378M, max capacity 6028M".
     */
    private static final Pattern HEAP_USED = Pattern.compile(
            "heap\\s+total \\d+K, used (\\d+)K|ZHeap\\s+used (\\d+)([KMG])");

    private final Map<String, Long> pids;

    MemoryWatch(Map<String, Long> watched) {
        this.pids = new LinkedHashMap<>(watched);
    }

    /** Resident set of every watched process, in bytes. */
    Map<String, Long> rss() {
        Map<String, Long> out = new LinkedHashMap<>();
        pids.forEach((name, pid) -> out.put(name, rss(pid)));
        return out;
    }

    /** Heap in use right after a full collection of the named process, in bytes. */
    long heapAfterFullGc(String name) {
        Long pid = pids.get(name);
        if (pid == null || jcmd(pid, "GC.run") == null) {
            return -1;
        }
        String info = jcmd(pid, "GC.heap_info");
        return info == null ? -1 : heapUsed(info);
    }

    /** The heap in use that {@code GC.heap_info} printed, in bytes; -1 when it names no heap this reads. */
    static long heapUsed(String heapInfo) {
        Matcher m = HEAP_USED.matcher(heapInfo);
        if (!m.find()) {
            return -1;
        }
        if (m.group(1) != null) {
            return Long.parseLong(m.group(1)) * 1024;
        }
        int shift = switch (m.group(3)) {
            case "K" -> 10;
            case "M" -> 20;
            default -> 30;
        };
        return Long.parseLong(m.group(2)) << shift;
    }

    private static long rss(long pid) {
        try {
            Matcher m = VM_RSS.matcher(Files.readString(Path.of("/proc", Long.toString(pid), "status")));
            return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The output of one jcmd command, or null when it failed. */
    private static String jcmd(long pid, String command) {
        Path java = Path.of(ProcessHandle.current().info().command().orElse("java"));
        try {
            Process p = new ProcessBuilder(java.resolveSibling("jcmd").toString(), Long.toString(pid), command)
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    static String megabytes(long bytes) {
        return bytes < 0 ? "n/a" : String.format("%.1f MB", bytes / 1048576.0);
    }

    /** Bytes per open stream between two figures of one process, in KB; n/a when either is unknown. */
    static String perStream(long open, long idle, int streams) {
        return open < 0 || idle < 0 || streams <= 0 ? "n/a"
                : String.format("%.1f KB", (open - idle) / 1024.0 / streams);
    }
}
