package io.handoff.connector.openengine;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;

import java.time.Clock;
import java.util.List;
import java.util.Map;

/** A recording prefill engine ("p") and decode engine ("d"), and the openengine connector pointed at them. */
final class RecordingEngines implements AutoCloseable {
    final RecordingEngine prefill = new RecordingEngine();
    final RecordingEngine decode = new RecordingEngine();
    final EngineConnector connector;

    RecordingEngines(Map<String, String> options) {
        ConnectorConfig cfg = new ConnectorConfig("route-1", "route-model", List.of(prefill.endpoint("p")),
            List.of(decode.endpoint("d")), options);
        // this connector brings its own gRPC event loops, so it is lent no Vert.x
        connector = new OpenEngineConnectorService().create(cfg, ConnectorContext.of(null, Clock.systemUTC()));
    }

    /** A context-first handoff of {@code request} between the two engines. */
    Handoff plan(String id, GenerateRequest request) {
        return connector.plan(id, ScheduleStyle.CONTEXT_FIRST, request, prefill.endpoint("p"), decode.endpoint("d"));
    }

    @Override
    public void close() {
        connector.close();
        prefill.close();
        decode.close();
    }
}
