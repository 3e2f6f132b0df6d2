package io.handoff.connector.tck.sim;

import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.simulator.SimEngine;

import java.time.Duration;
import java.util.function.ToLongFunction;

/** An embedded simulator engine seen through the suite's {@link SimulatedEngine}, via its Java API. */
public final class EmbeddedEngine implements SimulatedEngine {

    private final SimEngine engine;
    private final ToLongFunction<SimEngine> pinnedBlocks;

    private EmbeddedEngine(SimEngine engine, ToLongFunction<SimEngine> pinnedBlocks) {
        this.engine = engine;
        this.pinnedBlocks = pinnedBlocks;
    }

    /** Pinned KV is what the engine's holds keep (running requests and parked prefills). */
    public EmbeddedEngine(SimEngine engine) {
        this(engine, e -> e.stat("kv_blocks_pinned_now"));
    }

    /** Pinned KV is every block of the engine's pool that is not free, whatever holds it. */
    public static EmbeddedEngine countingUsedBlocks(SimEngine engine) {
        return new EmbeddedEngine(engine, e -> e.stat("kv_blocks_total") - e.stat("kv_blocks_free"));
    }

    @Override
    public long pinnedBlocks() {
        return pinnedBlocks.applyAsLong(engine);
    }

    @Override
    public long stat(String name) {
        return engine.stat(name);
    }

    @Override
    public void delayAnswers(Duration delay) {
        engine.faults().responseDelayMs(delay.toMillis());
    }

    @Override
    public void delayAdmission(Duration delay) {
        engine.faults().latencyMs(delay.toMillis());
    }

    @Override
    public void reset() {
        engine.reset();
    }

    @Override
    public void clearFaults() {
        engine.faults().clear();
    }

    @Override
    public void crash(Duration restartAfter) {
        engine.crash(restartAfter.toMillis());
    }

    @Override
    public boolean isUp() {
        return engine.isUp();
    }

    /** Sweeps the engine's holds against the shared clock without moving it. */
    public void sweep() {
        engine.advanceClock(Duration.ZERO);
    }
}
