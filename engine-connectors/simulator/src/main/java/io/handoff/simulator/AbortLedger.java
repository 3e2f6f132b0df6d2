package io.handoff.simulator;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The native aborts one engine received, per native id (an SGLang rid, an openengine request id or kv session, a
 * vLLM request the decode told the prefill to free, a request whose client went away). Handoff promises one
 * discharge per held KV: a second abort naming an id that was already aborted (and so freed, or found nothing to
 * free) is a repeated discharge, counted in {@code aborts_repeated_total} and listed with when both came, on the
 * engine's clock, so that a harness can tell a repeat that follows a loss of the store's writes from one that does
 * not. Outlives a simulated crash (it is the simulator's observation, not the engine's memory); {@code /sim/reset}
 * clears it. Event-loop confined.
 */
public final class AbortLedger {

    /** One repeated abort: the id, when it was first aborted, and when again. */
    public record Repeat(String id, long firstAtMs, long againAtMs) {
    }

    /** Ids remembered at most (the oldest forgotten first): far above what a chaos run aborts. */
    private static final int MAX_IDS = 500_000;
    /** Repeats listed at most in the stats; the counter counts every one. */
    private static final int MAX_LISTED = 1_000;

    private final SimClock clock;
    private final EngineStats stats;
    private final Map<String, Long> firstAbortAt = new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > MAX_IDS;
        }
    };
    private final List<Repeat> repeats = new ArrayList<>();

    public AbortLedger(SimClock clock, EngineStats stats) {
        this.clock = clock;
        this.stats = stats;
    }

    /** Records a native abort naming {@code id}; answers whether the id had been aborted before (a repeat). */
    public boolean aborted(String id) {
        long now = clock.millis();
        stats.inc(EngineStats.ABORTS_TOTAL);
        Long first = firstAbortAt.putIfAbsent(id, now);
        if (first == null) {
            return false;
        }
        stats.inc(EngineStats.ABORTS_REPEATED_TOTAL);
        if (repeats.size() < MAX_LISTED) {
            repeats.add(new Repeat(id, first, now));
        }
        return true;
    }

    public List<Repeat> repeats() {
        return List.copyOf(repeats);
    }

    public void clear() {
        firstAbortAt.clear();
        repeats.clear();
    }

    /** Lists the repeats as {@code aborts_repeated: [{id, first_at_ms, again_at_ms}]}. */
    public void writeTo(ObjectNode out) {
        ArrayNode a = out.putArray("aborts_repeated");
        for (Repeat r : repeats) {
            a.addObject().put("id", r.id()).put("first_at_ms", r.firstAtMs()).put("again_at_ms", r.againAtMs());
        }
    }
}
