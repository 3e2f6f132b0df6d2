package io.handoff.connector.tck.sim;

import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.simulator.SimEngine;

import java.time.Duration;

/** An embedded simulator engine seen through the suite's {@link SimulatedEngine}, via its Java API. */
public final class EmbeddedEngine implements SimulatedEngine {

    private final SimEngine engine;

    public EmbeddedEngine(SimEngine engine) {
        this.engine = engine;
    }

    @Override
    public long pinnedBlocks() {
        return stat("kv_blocks_pinned_now");
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
