package io.handoff.connector.trtllm;

import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.tck.ConnectorContract;
import io.handoff.connector.tck.SimulatedFleet;
import io.vertx.core.Vertx;

/**
 * The shared contract on a context-first trtllm route (kv_transfer_timeout_ms 60 s). The suite's abort and
 * peer-loss cases run a prefill leg on its own, which a generation-first context cannot do (it waits for its
 * generation), so generation-first is covered by {@link TrtllmGenerationFirstTest}.
 */
class TrtllmContextFirstContractTest extends ConnectorContract {

    @Override
    protected ConnectorService service() {
        return new TrtllmConnectorService();
    }

    @Override
    protected SimulatedFleet startFleet(Vertx vertx) {
        return new TrtllmSimulatedFleet(vertx, "context-first");
    }
}
