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
 * The wiring every OpenAI-compatible family's connector of a route shares: the HTTP clients to the route's engines,
 * opened with the connector and closed with it (one for the prefill legs, one for everything else, each with its own
 * connection limit per endpoint), the capabilities the family declared for the route, and the gateway's
 * clock, on which every hold is measured. The legs, holds and probes are the family's.
 */
public abstract class OpenAiHttpConnector implements EngineConnector {

    protected final ConnectorConfig config;
    protected final Clock clock;
    /** Decode legs, probes and cleanup calls. */
    protected final EngineHttpClient http;
    /** Prefill legs only: short exchanges, whose connections should not number as many as the open streams. */
    protected final EngineHttpClient prefillHttp;
    private final String family;
    private final ConnectorCapabilities capabilities;

    protected OpenAiHttpConnector(String family, ConnectorConfig config, ConnectorCapabilities capabilities,
            ConnectorContext context, ClientSettings client) {
        this.family = family;
        this.config = config;
        this.capabilities = capabilities;
        this.clock = context.clock();
        this.http = new EngineHttpClient(context.vertx(), client);
        this.prefillHttp = new EngineHttpClient(context.vertx(), client.forPrefillLegs());
    }

    @Override
    public final ConnectorCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public void close() {
        http.close();
        prefillHttp.close();
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
