package io.handoff.connector.openengine;

import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.tck.ConnectorContract;
import io.handoff.connector.tck.SimulatedFleet;
import io.vertx.core.Vertx;

/** The shared connector contract, run against the openengine simulators. */
class OpenEngineContractTest extends ConnectorContract {

    @Override
    protected ConnectorService service() {
        return new OpenEngineConnectorService();
    }

    @Override
    protected SimulatedFleet startFleet(Vertx vertx) {
        return new OpenEngineFleet(vertx);
    }
}
