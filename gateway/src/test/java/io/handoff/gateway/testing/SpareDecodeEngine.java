package io.handoff.gateway.testing;

import io.handoff.simulator.EngineConfig;
import io.handoff.simulator.Engines;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
import io.vertx.core.Vertx;

import java.util.Map;

/**
 * A vLLM decode simulator outside the test fleet, on a Vert.x of its own, for tests that add an endpoint to a pool
 * (by the admin API or a reload) and need an engine no route names yet. It shares the fleet's clock, so a test that
 * moves time moves it for this engine too.
 */
public final class SpareDecodeEngine implements AutoCloseable {

    private final Vertx vertx;
    private final SimEngine engine;

    private SpareDecodeEngine(Vertx vertx, SimEngine engine) {
        this.vertx = vertx;
        this.engine = engine;
    }

    /** Started and listening, serving the fleet's model with tokens 20 ms apart. */
    public static SpareDecodeEngine vllm(SimClock clock) {
        Vertx vertx = Vertx.vertx();
        return new SpareDecodeEngine(vertx, start(vertx, clock));
    }

    /** The same engine on a Vert.x the caller owns (and closes), for a test that starts several. */
    public static SimEngine start(Vertx vertx, SimClock clock) {
        EngineConfig c = Engines.config(Family.VLLM);
        Map.of("model", SimFleetTestResource.ENGINE_MODEL, "token-interval-ms", "20").forEach(c::apply);
        c.role = Role.DECODE;
        c.clock = clock;
        return Engines.create(c).startBlocking(vertx);
    }

    public SimEngine engine() {
        return engine;
    }

    @Override
    public void close() {
        engine.stopBlocking();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
