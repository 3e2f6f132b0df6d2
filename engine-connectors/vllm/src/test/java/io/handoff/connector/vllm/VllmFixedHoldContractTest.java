package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.tck.ConnectorContract;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.simulator.vllm.VllmConfig;
import io.vertx.core.Vertx;

/** vLLM builds with the fixed VLLM_NIXL_ABORT_REQUEST_TIMEOUT (480 s). */
class VllmFixedHoldContractTest extends ConnectorContract {

    @Override
    protected ConnectorService service() {
        return new VllmConnectorService();
    }

    @Override
    protected SimulatedFleet startFleet(Vertx vertx) {
        return new VllmSimulatedFleet(vertx, VllmConfig.Mode.LEGACY);
    }
}
