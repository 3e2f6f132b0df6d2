package io.handoff.simulator;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Pinned KV of one engine, by native key. Holds are freed by {@link #release}, or by the sweep when their deadline on
 * the {@link SimClock} has passed. One Vert.x timer per hold wakes the sweep up in real time; a clock advance or
 * {@link #expireAll()} sweeps at once. With the {@code leak} fault on, the sweep leaves expired holds pinned and counts
 * them as leaked instead (a model of the engine bugs where the timeout cleanup never runs).
 *
 * <p>Only used on the owning engine's event loop.
 */
public final class HoldTable {
    private final Vertx vertx;
    private final SimClock clock;
    private final KvBlockPool pool;
    private final EngineStats stats;
    private final Faults faults;
    private final Map<String, KvHold> holds = new LinkedHashMap<>();
    private Runnable onFreed = () -> { };

    public HoldTable(Vertx vertx, SimClock clock, KvBlockPool pool, EngineStats stats, Faults faults) {
        this.vertx = vertx;
        this.clock = clock;
        this.pool = pool;
        this.stats = stats;
        this.faults = faults;
    }

    /** Called after blocks went back to the pool, so that waiting requests can be admitted. */
    public void onFreed(Runnable r) {
        this.onFreed = r;
    }

    /**
     * Pins already-allocated blocks under {@code key}. {@code ttlMs <= 0} means no deadline yet.
     *
     * @throws IllegalStateException if the key is already pinned
     */
    public KvHold pin(String key, String kind, int[] blocks, long ttlMs, Consumer<KvHold> onExpire) {
        if (holds.containsKey(key)) {
            throw new IllegalStateException("already pinned: " + key);
        }
        long now = clock.millis();
        KvHold h = new KvHold(key, kind, blocks, now, ttlMs > 0 ? now + ttlMs : Long.MAX_VALUE, onExpire);
        holds.put(key, h);
        stats.inc(EngineStats.HOLDS_PINNED_TOTAL);
        schedule(h);
        return h;
    }

    /** Sets a new deadline {@code ttlMs} from now ({@code <= 0}: none). */
    public void setTtl(KvHold h, long ttlMs) {
        h.deadlineMs = ttlMs > 0 ? clock.millis() + ttlMs : Long.MAX_VALUE;
        schedule(h);
    }

    /** Extends the deadline to max(current, now + ttlMs), the vLLM lease heartbeat rule. */
    public void extend(KvHold h, long ttlMs) {
        long candidate = clock.millis() + ttlMs;
        if (candidate > h.deadlineMs || h.deadlineMs == Long.MAX_VALUE) {
            h.deadlineMs = candidate;
            schedule(h);
        }
    }

    public KvHold get(String key) {
        return holds.get(key);
    }

    public Collection<KvHold> all() {
        return holds.values();
    }

    /** Frees a hold for {@code reason}; returns it, or null when the key is not pinned (already freed). */
    public KvHold release(String key, FreeReason reason) {
        KvHold h = holds.remove(key);
        if (h == null) {
            return null;
        }
        cancelTimer(h);
        pool.free(h.blocks);
        stats.countFreed(reason, h.blocks.length);
        onFreed.run();
        return h;
    }

    /** Frees expired holds (unless the leak fault is on) and runs their expiry callbacks. */
    public void sweep() {
        long now = clock.millis();
        List<KvHold> expired = new ArrayList<>();
        for (KvHold h : holds.values()) {
            if (h.deadlineMs <= now) {
                if (faults.leak()) {
                    if (!h.leaked) {
                        h.leaked = true;
                        stats.inc(EngineStats.LEAKED_TOTAL);
                    }
                } else {
                    expired.add(h);
                }
            } else if (h.timerId < 0) {
                schedule(h);
            }
        }
        for (KvHold h : expired) {
            if (holds.remove(h.key) != null) {
                cancelTimer(h);
                pool.free(h.blocks);
                stats.countFreed(FreeReason.TIMEOUT, h.blocks.length);
            }
        }
        if (!expired.isEmpty()) {
            onFreed.run();
        }
        for (KvHold h : expired) {
            if (h.onExpire != null) {
                h.onExpire.accept(h);
            }
        }
    }

    /** Makes every hold that has a deadline expire now (the manual {@code expireNow()} hook). */
    public void expireAll() {
        long now = clock.millis();
        for (KvHold h : holds.values()) {
            if (h.deadlineMs != Long.MAX_VALUE) {
                h.deadlineMs = now;
            }
        }
        sweep();
    }

    /** Drops everything without freeing through the normal paths (crash: the process memory is gone). */
    public int dropAll() {
        int blocks = 0;
        for (KvHold h : holds.values()) {
            cancelTimer(h);
            blocks += h.blocks.length;
            stats.inc(EngineStats.HOLDS_ENDED_TOTAL);
        }
        holds.clear();
        return blocks;
    }

    public int pinnedBlocks() {
        int n = 0;
        for (KvHold h : holds.values()) {
            n += h.blocks.length;
        }
        return n;
    }

    public int pinnedSessions() {
        return holds.size();
    }

    /** Holds still pinned although their deadline has passed. */
    public int leakedNow() {
        long now = clock.millis();
        int n = 0;
        for (KvHold h : holds.values()) {
            if (h.deadlineMs <= now) {
                n++;
            }
        }
        return n;
    }

    private void schedule(KvHold h) {
        cancelTimer(h);
        if (h.deadlineMs == Long.MAX_VALUE) {
            return;
        }
        long delay = Math.max(1, h.deadlineMs - clock.millis());
        h.timerId = vertx.setTimer(delay, id -> {
            h.timerId = -1;
            sweep();
        });
    }

    private void cancelTimer(KvHold h) {
        if (h.timerId >= 0) {
            vertx.cancelTimer(h.timerId);
            h.timerId = -1;
        }
    }
}
