package io.handoff.connector.tck.sim;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.simulator.EngineConfig;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A {@link SimulatedFleet} of embedded simulators sharing one clock: the prefill and decode engines the route
 * points at, and any further engines the family needs (a reference engine for aggregated answers). A family's fleet
 * starts the engines, builds the route to them and answers {@link #aggregatedText}; the rest is here.
 */
public abstract class EmbeddedFleet implements SimulatedFleet {

    private final SimEngine prefillEngine;
    private final SimEngine decodeEngine;
    private final List<SimEngine> otherEngines;
    private final EmbeddedEngine prefillView;
    private final EmbeddedEngine decodeView;
    private final ConnectorConfig route;
    private final Duration idleTimeout;

    /**
     * @param others      started engines on the same clock that the route does not name; stopped with the fleet
     * @param idleTimeout the longest silence the route's options let the connector wait on a leg
     * @param view        how the suite sees an engine's pinned KV ({@link EmbeddedEngine#EmbeddedEngine} or
     *                    {@link EmbeddedEngine#countingUsedBlocks})
     */
    protected EmbeddedFleet(SimEngine prefillEngine, SimEngine decodeEngine, List<SimEngine> others,
            ConnectorConfig route, Duration idleTimeout, Function<SimEngine, EmbeddedEngine> view) {
        this.prefillEngine = prefillEngine;
        this.decodeEngine = decodeEngine;
        this.otherEngines = List.copyOf(others);
        this.prefillView = view.apply(prefillEngine);
        this.decodeView = view.apply(decodeEngine);
        this.route = route;
        this.idleTimeout = idleTimeout;
    }

    protected EmbeddedFleet(SimEngine prefillEngine, SimEngine decodeEngine, List<SimEngine> others,
            ConnectorConfig route, Duration idleTimeout) {
        this(prefillEngine, decodeEngine, others, route, idleTimeout, EmbeddedEngine::new);
    }

    /**
     * Sets what the engines of a contract fleet share: the fleet's clock, the model, and tokens a few milliseconds
     * apart, so that the suite can cancel a stream mid-way.
     */
    protected static <C extends EngineConfig> C fleetEngine(C config, SimClock clock, Role role, String model) {
        config.clock = clock;
        config.role = role;
        config.model = model;
        config.tokenIntervalMs = 5;
        return config;
    }

    public SimEngine prefillEngine() {
        return prefillEngine;
    }

    public SimEngine decodeEngine() {
        return decodeEngine;
    }

    public EmbeddedEngine prefillView() {
        return prefillView;
    }

    public EmbeddedEngine decodeView() {
        return decodeView;
    }

    @Override
    public ConnectorConfig route() {
        return route;
    }

    /** The engine listening at the endpoint's address, so that an endpoint a connector rebuilt is found too. */
    @Override
    public SimulatedEngine engine(Endpoint endpoint) {
        return endpoint.uri().equals(prefill().uri()) ? prefillView : decodeView;
    }

    @Override
    public void advanceClock(Duration by) {
        prefillEngine.advanceClock(by); // the clock is shared: move it once, then let the other engines sweep too
        decodeView.sweep();
        for (SimEngine other : otherEngines) {
            other.advanceClock(Duration.ZERO);
        }
    }

    @Override
    public Duration idleTimeout() {
        return idleTimeout;
    }

    @Override
    public void close() {
        List<SimEngine> all = new ArrayList<>(List.of(prefillEngine, decodeEngine));
        all.addAll(otherEngines);
        for (SimEngine engine : all) {
            engine.stopBlocking();
        }
    }
}
