package io.handoff.connector.trtllm;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.EngineConnector;

/** The TensorRT-LLM family: routes select it with {@code family: trtllm}; options are in {@link TrtllmSettings}. */
public final class TrtllmConnectorService implements ConnectorService {

    public static final String FAMILY = "trtllm";

    @Override
    public String family() {
        return FAMILY;
    }

    @Override
    public ConnectorCapabilities initialise(ConnectorConfig config) {
        return TrtllmCapabilities.of(TrtllmSettings.from(config));
    }

    @Override
    public EngineConnector create(ConnectorConfig config, ConnectorContext context) {
        return new TrtllmEngineConnector(config, TrtllmSettings.from(config), context);
    }
}
