package io.handoff.connector.tck;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.openengine.v1.GenerateRequest;

import java.time.Duration;

/**
 * A running fleet of one family's simulators: one producer and one consumer on a shared clock, and the route that
 * points the connector at them. Engines must emit tokens at least a few milliseconds apart so that a stream can be
 * cancelled mid-way, and the route's options must match the engines' hold settings.
 */
public interface SimulatedFleet extends AutoCloseable {

    /** The route the connector is created for: its pools are this fleet's endpoints. */
    ConnectorConfig route();

    default Endpoint prefill() {
        return route().prefillPool().get(0);
    }

    default Endpoint decode() {
        return route().decodePool().get(0);
    }

    SimulatedEngine engine(Endpoint endpoint);

    /** Moves the fleet's shared clock (engine timers and holds), never sleeping. */
    void advanceClock(Duration by);

    /**
     * The text an ordinary aggregated run of the request gives on this fleet (the reference answer); for a chat
     * ({@code InputKind.CHAT_MESSAGES}), the content an aggregated run of the same chat gives.
     */
    String aggregatedText(GenerateRequest request);

    /** The longest silence the route's options let the connector wait on a leg. */
    Duration idleTimeout();

    @Override
    void close();
}
