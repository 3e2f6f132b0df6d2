package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * KV discharged more than once, read from the simulators: each engine counts, per native id, the aborts naming an id
 * it had already been asked to abort ({@code aborts_repeated_total}) and lists each with when the first and the
 * second came ({@code aborts_repeated}, on the engine's clock, the machine's wall time). Handoff promises one
 * discharge per held KV; a repeat is excused only when a loss of the store's writes the harness injected lies between
 * the two aborts (the record that the first had been done was lost with the store, so another replica did it again).
 * A repeat an engine counted but did not list (it lists 1,000) is never excused.
 */
final class RepeatedDischarges {

    /** Repeats over every engine, those a store loss explains, and one line per repeat for the notes. */
    record Count(long total, long afterLoss, List<String> lines) {
        long unexcused() {
            return total - afterLoss;
        }
    }

    private RepeatedDischarges() {
    }

    /** {@code statsByEngine}: each engine's name and its {@code /sim/stats}. */
    static Count count(Map<String, JsonNode> statsByEngine, History history) {
        long total = 0;
        long afterLoss = 0;
        List<String> lines = new ArrayList<>();
        for (var e : statsByEngine.entrySet()) {
            total += e.getValue().path("aborts_repeated_total").asLong();
            for (JsonNode r : e.getValue().path("aborts_repeated")) {
                long first = history.sinceStartMs(r.path("first_at_ms").asLong());
                long again = history.sinceStartMs(r.path("again_at_ms").asLong());
                History.StoreLoss loss = lossBetween(history, first, again);
                if (loss != null) {
                    afterLoss++;
                }
                lines.add((loss != null ? "after a " + loss.kind() + ", " : "") + "discharged twice: "
                        + e.getKey() + " " + r.path("id").asText() + " aborted at " + first + " ms and again at "
                        + again + " ms");
            }
        }
        return new Count(total, afterLoss, lines);
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
