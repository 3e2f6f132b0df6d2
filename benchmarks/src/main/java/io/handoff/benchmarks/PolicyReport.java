package io.handoff.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The table of the policy comparison (issue 15): for each workload and each policy route, the requests measured, the
 * throughput, the prefill engines' prefix hit rate (cached prompt tokens over all prompt tokens prefilled, over the
 * whole phase: settle and drain included, since the counters cannot be cut at the window's edges) and the time to
 * first token. Then the verdicts the issue asks for: prefix-affinity against least-outstanding.
 */
final class PolicyReport {

    static final String BASELINE = "least-outstanding";
    static final String AFFINITY = "prefix-affinity";

    private final List<Target> targets;
    private final Map<String, Map<Target, PrefixTokens>> prefix = new LinkedHashMap<>();
    private final Map<String, Map<Target, Tally>> load = new LinkedHashMap<>();

    PolicyReport(List<Target> targets) {
        this.targets = targets;
    }

    void prefixTokens(PromptWorkload workload, Target target, PrefixTokens phase) {
        prefix.computeIfAbsent(workload.name(), w -> new LinkedHashMap<>()).merge(target, phase, PrefixTokens::plus);
    }

    void add(PromptWorkload workload, Map<Target, Tally> tallies) {
        load.put(workload.name(), tallies);
    }

    void print() {
        System.out.println();
        System.out.println("Policies (one gateway route each), the same prefill and decode simulators");
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"workload / prefill-policy", "requests", "req/s", "prefix hit", "TTFT p50 ms",
            "TTFT p99 ms", "total p50 ms", "gateway cores", "errors"});
        load.forEach((workload, tallies) -> tallies.forEach((t, tally) -> rows.add(new String[] {
            workload + " / " + t.name(), String.valueOf(tally.requests()), String.format("%.1f", tally.perSecond()),
            String.format("%.1f %%", 100 * hits(workload, t).hitRate()),
            String.format("%.1f", tally.ttft.summary().p50Millis()),
            String.format("%.1f", tally.ttft.summary().p99Millis()),
            String.format("%.1f", tally.total.summary().p50Millis()),
            String.format("%.2f", tally.cores().getOrDefault("gateway", Double.NaN)),
            String.valueOf(tally.errors.count())})));
        Table.print(rows);
        load.forEach((workload, tallies) -> tallies.forEach((t, tally) -> System.out.printf(
                "  req/s of each round, %s / %s: %s%n", workload, t.name(), tally.rates().stream()
                        .map(r -> String.format("%.0f", r)).toList())));
        verdicts();
    }

    private PrefixTokens hits(String workload, Target t) {
        return prefix.getOrDefault(workload, Map.of()).getOrDefault(t, PrefixTokens.NONE);
    }

    /** prefix-affinity against least-outstanding on each workload, when both ran. */
    private void verdicts() {
        Target baseline = named(BASELINE);
        Target affinity = named(AFFINITY);
        if (baseline == null || affinity == null) {
            return;
        }
        System.out.println();
        load.forEach((workload, tallies) -> {
            Tally b = tallies.get(baseline);
            Tally a = tallies.get(affinity);
            System.out.printf("  %s: %s vs %s: prefix hit %.1f %% vs %.1f %%, TTFT p50 %.1f vs %.1f ms (x%.2f),"
                            + " p99 %.1f vs %.1f ms (x%.2f), throughput x%.2f%n", workload, AFFINITY, BASELINE,
                    100 * hits(workload, affinity).hitRate(), 100 * hits(workload, baseline).hitRate(),
                    a.ttft.summary().p50Millis(), b.ttft.summary().p50Millis(),
                    a.ttft.summary().p50Millis() / b.ttft.summary().p50Millis(),
                    a.ttft.summary().p99Millis(), b.ttft.summary().p99Millis(),
                    a.ttft.summary().p99Millis() / b.ttft.summary().p99Millis(), a.perSecond() / b.perSecond());
        });
    }

    private Target named(String policy) {
        return targets.stream().filter(t -> t.name().equals(policy)).findFirst().orElse(null);
    }
}
