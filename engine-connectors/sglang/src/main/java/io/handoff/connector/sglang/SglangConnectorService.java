package io.handoff.connector.sglang;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.EngineConnector;

/** The SGLang family: routes select it with {@code family: sglang}; options are described in {@link SglangSettings}. */
public final class SglangConnectorService implements ConnectorService {

    public static final String FAMILY = "sglang";

    @Override
    public String family() {
        return FAMILY;
    }

    @Override
    public ConnectorCapabilities initialise(ConnectorConfig config) {
        return SglangCapabilities.of(SglangSettings.from(config));
    }

    @Override
    public EngineConnector create(ConnectorConfig config, ConnectorContext context) {
        return new SglangEngineConnector(config, SglangSettings.from(config), context);
    }
}
