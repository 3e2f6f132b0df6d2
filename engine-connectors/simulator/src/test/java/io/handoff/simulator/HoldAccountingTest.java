package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every hold is counted once when pinned and once when it ends, whatever ends it (a free of any reason, the engine's
 * own timer, a crash): the chaos harness checks the two totals against each other to find KV ended twice or never.
 */
class HoldAccountingTest {

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @Test
    void eachHoldEndsOnceWhateverEndsIt() {
        KvBlockPool pool = new KvBlockPool(64, 16);
        EngineStats stats = new EngineStats();
        HoldTable holds = new HoldTable(vertx, new SimClock(), pool, stats, new Faults());
        holds.pin("pulled", "prefill", pool.allocate(2), 0, null);
        holds.pin("expired", "prefill", pool.allocate(2), 60_000, null);
        holds.pin("lost", "prefill", pool.allocate(2), 0, null);
        assertEquals(3, stats.get(EngineStats.HOLDS_PINNED_TOTAL));
        assertEquals(0, stats.get(EngineStats.HOLDS_ENDED_TOTAL));

        holds.release("pulled", FreeReason.PULL);
        assertNull(holds.release("pulled", FreeReason.ABORT), "a second discharge of the same KV frees nothing");
        holds.expireAll();
        holds.dropAll();

        assertEquals(3, stats.get(EngineStats.HOLDS_ENDED_TOTAL), "pulled, timed out, lost with a crash: once each");
        assertEquals(1, stats.get(EngineStats.FREED_BY_PULL));
        assertEquals(0, stats.get(EngineStats.FREED_BY_ABORT));
        assertEquals(1, stats.get(EngineStats.FREED_BY_TIMEOUT));
        assertEquals(0, holds.pinnedSessions());
    }
}
