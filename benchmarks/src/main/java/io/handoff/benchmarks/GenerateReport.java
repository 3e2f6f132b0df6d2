package io.handoff.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The printed figures of {@link GenerateBenchmark}: per target, requests/s and TTFT and total latency percentiles;
 * the CPU each process spent per request; then each gateway front against the direct baseline of the same run.
 */
final class GenerateReport {

    private final GenerateOptions o;
    private final List<Target> targets;
    private final Map<Target, Tally> load;
    private final Map<Target, Tally> latency;
    private final Map<String, Double> latencyCores;
    private final List<String> warmTrace;

    GenerateReport(GenerateOptions o, List<Target> targets, Map<Target, Tally> load, Map<Target, Tally> latency,
            Map<String, Double> latencyCores, List<String> warmTrace) {
        this.o = o;
        this.targets = targets;
        this.load = load;
        this.latency = latency;
        this.latencyCores = latencyCores;
        this.warmTrace = warmTrace;
    }

    void print() {
        Target direct = targets.get(0);
        System.out.println();
        System.out.printf("Load - concurrency %d, %d round(s) per target, order rotated each round; %d output tokens%n",
                o.concurrency(), o.rounds(), o.maxTokens());
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"target", "requests", "req/s", "TTFT p50 ms", "TTFT p99 ms", "total p50 ms",
            "total p99 ms", "errors"});
        for (Target t : targets) {
            Tally tally = load.get(t);
            Percentiles.Summary ttft = tally.ttft.summary();
            Percentiles.Summary total = tally.total.summary();
            rows.add(new String[] {t.name(), Long.toString(tally.requests()), f0(tally.perSecond()),
                f3(ttft.p50Millis()), f3(ttft.p99Millis()), f3(total.p50Millis()), f3(total.p99Millis()),
                Long.toString(tally.errors.count())});
        }
        Table.print(rows);
        for (Target t : targets) {
            System.out.printf("  req/s of each round, %-30s %s%n", t.name() + ":", rates(load.get(t).rates()));
        }
        System.out.println("  warm-up slices (req/s): " + String.join(", ", warmTrace));
        printCpu();
        System.out.println();
        System.out.println("Gateway against direct, same run, under load:");
        for (Target t : targets.subList(1, targets.size())) {
            Tally g = load.get(t);
            Tally d = load.get(direct);
            double ratio = g.perSecond() / d.perSecond();
            System.out.printf("  %-30s throughput %.2f of direct (aim >= %.2f: %s); added TTFT p50 %s ms, p99 %s ms;"
                    + " added total p50 %s ms, p99 %s ms%n", t.name(), ratio, GenerateBenchmark.AIM_THROUGHPUT_RATIO,
                    ratio >= GenerateBenchmark.AIM_THROUGHPUT_RATIO ? "MET" : "MISSED",
                    added(g.ttft.summary().p50Millis(), d.ttft.summary().p50Millis()),
                    added(g.ttft.summary().p99Millis(), d.ttft.summary().p99Millis()),
                    added(g.total.summary().p50Millis(), d.total.summary().p50Millis()),
                    added(g.total.summary().p99Millis(), d.total.summary().p99Millis()));
        }
        if (latency != null) {
            printOneInFlight(direct);
        }
    }

    private void printOneInFlight(Target direct) {
        System.out.println();
        System.out.printf("One in flight - %.0f s, the targets taking turns request by request%n",
                o.latency().toMillis() / 1000.0);
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"target", "requests", "TTFT p50 ms", "TTFT p99 ms", "total p50 ms", "total p99 ms",
            "errors"});
        for (Target t : targets) {
            Tally tally = latency.get(t);
            Percentiles.Summary ttft = tally.ttft.summary();
            Percentiles.Summary total = tally.total.summary();
            rows.add(new String[] {t.name(), Long.toString(total.count()), f3(ttft.p50Millis()),
                f3(ttft.p99Millis()), f3(total.p50Millis()), f3(total.p99Millis()),
                Long.toString(tally.errors.count())});
        }
        Table.print(rows);
        System.out.println("  " + coresLine(latencyCores));
        Tally d = latency.get(direct);
        for (Target t : targets.subList(1, targets.size())) {
            Tally g = latency.get(t);
            double ttft = g.ttft.summary().p50Millis() - d.ttft.summary().p50Millis();
            double total = g.total.summary().p50Millis() - d.total.summary().p50Millis();
            System.out.printf("  %-30s added TTFT p50 %s ms (aim < %.0f ms: %s), p99 %s ms; added total p50 %s ms"
                    + " (aim < %.0f ms: %s), p99 %s ms%n", t.name(), signed(ttft), GenerateBenchmark.AIM_ADDED_P50_MS,
                    ttft < GenerateBenchmark.AIM_ADDED_P50_MS ? "MET" : "MISSED",
                    added(g.ttft.summary().p99Millis(), d.ttft.summary().p99Millis()), signed(total),
                    GenerateBenchmark.AIM_ADDED_P50_MS, total < GenerateBenchmark.AIM_ADDED_P50_MS ? "MET" : "MISSED",
                    added(g.total.summary().p99Millis(), d.total.summary().p99Millis()));
        }
    }

    /** Cores busy and CPU ms per request, per process, for each target's load windows. */
    private void printCpu() {
        Set<String> processes = new LinkedHashSet<>();
        targets.forEach(t -> processes.addAll(load.get(t).cores().keySet()));
        if (processes.isEmpty()) {
            return;
        }
        System.out.printf("  CPU in the load windows (cores busy of %d, and CPU ms per completed request):%n",
                Runtime.getRuntime().availableProcessors());
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("process"));
        targets.forEach(t -> {
            header.add(t.key() + " cores");
            header.add(t.key() + " ms/req");
        });
        rows.add(header.toArray(String[]::new));
        for (String p : processes) {
            List<String> row = new ArrayList<>(List.of(p));
            for (Target t : targets) {
                row.add(f2(load.get(t).cores().getOrDefault(p, Double.NaN)));
                row.add(f3(load.get(t).cpuMillisPerRequest().getOrDefault(p, Double.NaN)));
            }
            rows.add(row.toArray(String[]::new));
        }
        Table.print(rows);
    }

    /** The machine-readable summary line. */
    String resultLine(long errors) {
        Target direct = targets.get(0);
        StringBuilder line = new StringBuilder(String.format("RESULT store=%s concurrency=%d max_tokens=%d",
                o.store(), o.concurrency(), o.maxTokens()));
        for (Target t : targets) {
            Tally tally = load.get(t);
            line.append(String.format(" %s_rps=%.0f %s_ttft_p50_ms=%.3f %s_total_p50_ms=%.3f", t.key(),
                    tally.perSecond(), t.key(), tally.ttft.summary().p50Millis(), t.key(),
                    tally.total.summary().p50Millis()));
        }
        for (Target t : targets.subList(1, targets.size())) {
            line.append(String.format(" %s_throughput_ratio=%.2f", t.key(),
                    load.get(t).perSecond() / load.get(direct).perSecond()));
            if (latency != null) {
                line.append(String.format(" %s_added_ttft_p50_ms_1=%.3f %s_added_total_p50_ms_1=%.3f", t.key(),
                        latency.get(t).ttft.summary().p50Millis() - latency.get(direct).ttft.summary().p50Millis(),
                        t.key(),
                        latency.get(t).total.summary().p50Millis() - latency.get(direct).total.summary().p50Millis()));
            }
        }
        return line.append(" errors=").append(errors).toString();
    }

    static String coresLine(Map<String, Double> cores) {
        StringBuilder line = new StringBuilder("cpu in this window, cores busy of "
                + Runtime.getRuntime().availableProcessors() + ":");
        cores.forEach((name, c) -> line.append(String.format("  %s %s", name, c < 0 ? "n/a" : f2(c))));
        return line.toString();
    }

    private static String rates(List<Double> rates) {
        List<String> out = new ArrayList<>();
        rates.forEach(r -> out.add(f0(r)));
        return out.toString();
    }

    private static String added(double gateway, double direct) {
        return signed(gateway - direct);
    }

    private static String signed(double ms) {
        return String.format("%+.3f", ms);
    }

    private static String f0(double v) {
        return String.format("%.0f", v);
    }

    private static String f2(double v) {
        return Double.isNaN(v) ? "-" : String.format("%.2f", v);
    }

    private static String f3(double v) {
        return Double.isNaN(v) ? "-" : String.format("%.3f", v);
    }
}
