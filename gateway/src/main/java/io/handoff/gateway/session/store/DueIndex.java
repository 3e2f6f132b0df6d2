package io.handoff.gateway.session.store;

import io.handoff.gateway.session.store.SessionStore.DueEntry;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One bucket of the memory store's due index. Its cost does not grow with the sessions and tombstones it holds: each
 * is filed under the tick of {@value #TICK_MILLIS} ms its due time falls in, and filing, moving and removing touch
 * one tick. The ticks are ordered (a sorted map of at most a horizon's worth of ticks, not of sessions). Finding
 * what is due walks the ticks from the oldest and, in the tick of {@code now}, passes over what is not due yet: due
 * entries come out oldest tick first, and never before their time.
 *
 * <p>The caller keeps each session's due time (the store's entry has it) and names it to move or remove the
 * session, so the index holds no map of every session of its own. Guarded by the store's lock.
 */
final class DueIndex {

    /**
     * A second: coarse enough that a bucket's tick holds several sessions at a busy gateway's rate (the sorted map
     * then changes once per several writes), fine enough that the entries of the tick of {@code now} the reaper
     * passes over stay few.
     */
    static final long TICK_MILLIS = 1_000;

    private final TreeMap<Long, LinkedHashMap<String, Instant>> ticks = new TreeMap<>();
    /**
     * The same ticks by hash, for filing and removing: a descent of the sorted map on every write was the costliest
     * step of the memory store's writes (a tick's node is rarely in cache). The sorted map changes only when a tick
     * is first used or dropped, once per tick rather than once per session.
     */
    private final HashMap<Long, LinkedHashMap<String, Instant>> byTick = new HashMap<>();

    /** Files the session as due at {@code due}. */
    void file(String sessionId, Instant due) {
        Long tick = tick(due);
        LinkedHashMap<String, Instant> filed = byTick.get(tick);
        if (filed == null) {
            dropEmptyOldestTicks();
            filed = new LinkedHashMap<>();
            byTick.put(tick, filed);
            ticks.put(tick, filed);
        }
        filed.put(sessionId, due);
    }

    /**
     * Takes the session, filed at {@code due}, out of the index. A tick it leaves empty stays until it is the
     * oldest: a short request's lease tick empties a few milliseconds after it was made, and the next allocation in
     * this bucket files into it again (dropping and remaking it cost two changes of the sorted map per request). Empty
     * ticks ahead of now are at most one a second of the index's horizon (the longest lease, the tombstones'
     * retention); the reaper's walk drops those it passes.
     */
    void remove(String sessionId, Instant due) {
        Map<String, Instant> filed = byTick.get(tick(due));
        if (filed != null) {
            filed.remove(sessionId);
        }
    }

    private void dropEmptyOldestTicks() {
        Map.Entry<Long, LinkedHashMap<String, Instant>> oldest;
        while ((oldest = ticks.firstEntry()) != null && oldest.getValue().isEmpty()) {
            ticks.pollFirstEntry();
            byTick.remove(oldest.getKey());
        }
    }

    /** At most {@code limit} sessions due at {@code now}, oldest tick first; empty due ticks are dropped. */
    List<DueEntry> due(Instant now, int limit) {
        List<DueEntry> due = new ArrayList<>();
        Iterator<Map.Entry<Long, LinkedHashMap<String, Instant>>> dueTicks = ticks.headMap(tick(now), true).entrySet()
                .iterator();
        while (dueTicks.hasNext() && due.size() < limit) {
            Map.Entry<Long, LinkedHashMap<String, Instant>> tick = dueTicks.next();
            if (tick.getValue().isEmpty()) {
                dueTicks.remove();
                byTick.remove(tick.getKey());
                continue;
            }
            for (Map.Entry<String, Instant> filed : tick.getValue().entrySet()) {
                if (due.size() >= limit) {
                    break;
                }
                if (!filed.getValue().isAfter(now)) {
                    due.add(new DueEntry(filed.getKey(), filed.getValue()));
                }
            }
        }
        return due;
    }

    /** How many ticks the index holds, empty ones included. */
    int ticksHeld() {
        return ticks.size();
    }

    private static long tick(Instant due) {
        return Math.floorDiv(due.toEpochMilli(), TICK_MILLIS);
    }
}
