package io.handoff.connector.openai.family;

import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.openai.http.EngineHttpClient;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;

import java.time.Clock;
import java.util.Objects;

/**
 * The wiring every OpenAI-compatible family's connector of a route shares: one HTTP client to the route's engines,
 * opened with the connector and closed with it, the capabilities the family declared for the route, and the gateway's
 * clock, on which every hold is measured. The legs, holds and probes are the family's.
 */
public abstract class OpenAiHttpConnector implements EngineConnector {

    protected final ConnectorConfig config;
    protected final Clock clock;
    protected final EngineHttpClient http;
    private final String family;
    private final ConnectorCapabilities capabilities;

    protected OpenAiHttpConnector(String family, ConnectorConfig config, ConnectorCapabilities capabilities,
            ConnectorContext context, ClientSettings client) {
        this.family = family;
        this.config = config;
        this.capabilities = capabilities;
        this.clock = context.clock();
        this.http = new EngineHttpClient(context.vertx(), client);
    }

    @Override
    public final ConnectorCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public void close() {
        http.close();
    }

    /**
     * The gateway names both endpoints of every handoff it plans: a missing one is the caller's bug, not a request to
     * refuse.
     */
    protected static void requireEndpoints(Endpoint prefill, Endpoint decode) {
        Objects.requireNonNull(prefill, "prefill endpoint");
        Objects.requireNonNull(decode, "decode endpoint");
    }

    @Override
    public String toString() {
        return family + " connector for route " + config.route();
    }
}
