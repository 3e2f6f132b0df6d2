package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where in a handoff the clients' cancels landed, as the engines counted them ({@code /sim/stats}): a prefill leg
 * cancelled during its prefill, a decode leg before its first token, or mid-stream. The workload gives up at random
 * points (a short deadline, a cancel after a few events), then sweeps the phases it missed
 * ({@link Workload#reachEveryCancelPhase}); these figures show that each phase was reached, and a run fails when one
 * was not: it proved nothing of that phase.
 */
final class CancelPhases {

    static final String DURING_PREFILL = "cancelled_during_prefill";
    static final String BEFORE_FIRST_TOKEN = "cancelled_before_first_token";
    static final String MID_STREAM = "cancelled_mid_stream";

    /** The engines' counters, in the order a handoff goes through the phases. */
    static final List<String> COUNTERS = List.of(DURING_PREFILL, BEFORE_FIRST_TOKEN, MID_STREAM);

    private static final Map<String, String> NAMES = Map.of(
            DURING_PREFILL, "legs cancelled during the prefill",
            BEFORE_FIRST_TOKEN, "legs cancelled in the decode, before the first token",
            MID_STREAM, "legs cancelled mid-stream");

    private CancelPhases() {
    }

    /** Per phase, the cancels summed over the fleet, and per family (in the fleet's order). */
    record Count(Map<String, Long> total, Map<String, Map<String, Long>> byFamily) {
    }

    /** {@code statsByEngine}: each engine's {@code /sim/stats}, which names its family. */
    static Count count(Map<String, JsonNode> statsByEngine) {
        Map<String, Long> total = new LinkedHashMap<>();
        Map<String, Map<String, Long>> byFamily = new LinkedHashMap<>();
        for (String counter : COUNTERS) {
            total.put(counter, 0L);
        }
        for (JsonNode s : statsByEngine.values()) {
            Map<String, Long> family = byFamily.computeIfAbsent(s.path("family").asText("?"), f -> {
                Map<String, Long> m = new LinkedHashMap<>();
                COUNTERS.forEach(c -> m.put(c, 0L));
                return m;
            });
            for (String counter : COUNTERS) {
                long n = s.path(counter).asLong();
                total.merge(counter, n, Long::sum);
                family.merge(counter, n, Long::sum);
            }
        }
        return new Count(total, byFamily);
    }

    /** Each phase's figure, a must of at least one cancel; per family on a note. */
    static void check(Map<String, JsonNode> statsByEngine, Verdict v) {
        Count c = count(statsByEngine);
        v.figure("handoff legs the clients cancelled, by phase (engines' count)",
                c.total().values().stream().mapToLong(Long::longValue).sum());
        for (String counter : COUNTERS) {
            v.mustAtLeast("  " + NAMES.get(counter), 1, c.total().get(counter));
        }
        c.byFamily().forEach((family, counts) -> v.note(String.format(
                "cancels by phase on %-10s during prefill %4d, before first token %4d, mid-stream %4d", family,
                counts.get(COUNTERS.get(0)), counts.get(COUNTERS.get(1)), counts.get(COUNTERS.get(2)))));
    }
}
