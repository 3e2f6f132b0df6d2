package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.tck.ConnectorContract;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.simulator.vllm.VllmConfig;
import io.vertx.core.Vertx;

/** vLLM builds with kv_lease_duration (30 s) renewed by the consumer's heartbeats. */
class VllmLeaseContractTest extends ConnectorContract {

    @Override
    protected ConnectorService service() {
        return new VllmConnectorService();
    }

    @Override
    protected SimulatedFleet startFleet(Vertx vertx) {
        return new VllmSimulatedFleet(vertx, VllmConfig.Mode.LEASE);
    }
}
