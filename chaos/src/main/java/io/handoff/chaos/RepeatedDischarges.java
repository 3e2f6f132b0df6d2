package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * KV discharged more than once, read from the simulators: each engine counts, per native id, the aborts naming an id
 * it had already been asked to abort ({@code aborts_repeated_total}) and lists each with when the first and the
 * second came ({@code aborts_repeated}, on the engine's clock, the machine's wall time). Handoff promises one
 * discharge per held KV; a repeat is excused only when the record that the first had been done was lost, so that
 * another replica did it again:
 * <ul>
 * <li>a loss of the store's writes the harness injected lies between the two aborts;</li>
 * <li>a replica was killed or paused within {@link #DIED_WITHIN_MS} after the first abort, and the second came at
 * least {@link ChaosSettings#CLAIM_TTL_MS} minus {@link ChaosSettings#DISCHARGE_TIMEOUT_MS} later: the replica that
 * made the engine call died before writing what it did, and its claim ran out before another replica took the
 * cleanup over. Nothing can close that window but an engine that says what an abort freed.</li>
 * </ul>
 * A repeat an engine counted but did not list (it lists 1,000) is never excused.
 */
final class RepeatedDischarges {

    /** How soon after an engine call a replica that dies takes the record of it along. */
    static final long DIED_WITHIN_MS = 500;

    /**
     * Repeats over every engine, those a store loss explains, those a replica's death between the engine call and its
     * record explains, and one line per repeat for the notes.
     */
    record Count(long total, long afterLoss, long afterDeath, List<String> lines) {
        long unexcused() {
            return total - afterLoss - afterDeath;
        }
    }

    private RepeatedDischarges() {
    }

    /** {@code statsByEngine}: each engine's name and its {@code /sim/stats}. */
    static Count count(Map<String, JsonNode> statsByEngine, History history) {
        long total = 0;
        long afterLoss = 0;
        long afterDeath = 0;
        List<String> lines = new ArrayList<>();
        for (var e : statsByEngine.entrySet()) {
            total += e.getValue().path("aborts_repeated_total").asLong();
            for (JsonNode r : e.getValue().path("aborts_repeated")) {
                long first = history.sinceStartMs(r.path("first_at_ms").asLong());
                long again = history.sinceStartMs(r.path("again_at_ms").asLong());
                History.StoreLoss loss = lossBetween(history, first, again);
                String death = loss == null ? deathAfter(history, first, again) : null;
                String excuse = "";
                if (loss != null) {
                    afterLoss++;
                    excuse = "after a " + loss.kind() + ", ";
                } else if (death != null) {
                    afterDeath++;
                    excuse = "after " + death + ", ";
                }
                lines.add(excuse + "discharged twice: " + e.getKey() + " " + r.path("id").asText() + " aborted at "
                        + first + " ms and again at " + again + " ms");
            }
        }
        return new Count(total, afterLoss, afterDeath, lines);
    }

    /** A replica killed or paused just after the first abort, with the second as late as a takeover of its claim. */
    private static String deathAfter(History history, long firstMs, long againMs) {
        if (againMs - firstMs < ChaosSettings.CLAIM_TTL_MS - ChaosSettings.DISCHARGE_TIMEOUT_MS) {
            return null;
        }
        for (String[] event : history.events()) {
            long at = Long.parseLong(event[0]);
            boolean died = event[1].equals("replica-killed") || event[1].equals("replica-paused");
            if (died && at >= firstMs && at <= firstMs + DIED_WITHIN_MS) {
                return event[1] + " " + event[2] + " at " + at + " ms";
            }
        }
        return null;
    }

    private static History.StoreLoss lossBetween(History history, long fromMs, long toMs) {
        for (History.StoreLoss loss : history.storeLosses()) {
            if (loss.endMs() >= fromMs && loss.startMs() <= toMs) {
                return loss;
            }
        }
        return null;
    }
}
