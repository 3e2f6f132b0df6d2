package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.EngineConnector;

/** The vLLM family: routes select it with {@code family: vllm}; options are described in {@link VllmSettings}. */
public final class VllmConnectorService implements ConnectorService {

    public static final String FAMILY = "vllm";

    @Override
    public String family() {
        return FAMILY;
    }

    @Override
    public ConnectorCapabilities initialise(ConnectorConfig config) {
        return VllmCapabilities.of(VllmSettings.from(config));
    }

    @Override
    public EngineConnector create(ConnectorConfig config, ConnectorContext context) {
        return new VllmEngineConnector(config, VllmSettings.from(config), context);
    }
}
