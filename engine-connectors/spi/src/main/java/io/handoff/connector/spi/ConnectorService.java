package io.handoff.connector.spi;

/**
 * The entry point of one engine family, found with {@link java.util.ServiceLoader}: a new family is one new module
 * with a {@code META-INF/services/io.handoff.connector.spi.ConnectorService} file.
 *
 * <h2>Lifecycle promises</h2>
 * <ol>
 * <li>{@link #initialise} is called once per route at gateway start (and at config reload). It validates the
 * route's options and declares the capabilities for them, without any I/O. A route the family cannot honour
 * fails here with an {@link IllegalArgumentException} whose message names the setting and the reason: the gateway
 * refuses to start rather than weaken silently.</li>
 * <li>{@link #create} is called after a successful {@link #initialise} with the same configuration; the connector
 * it returns serves that route until the gateway calls {@link EngineConnector#close()}.</li>
 * <li>Implementations are stateless and thread-safe; all state lives in the connectors they create.</li>
 * </ol>
 */
public interface ConnectorService {

    /** The family name routes use to select this service, e.g. {@code vllm}. */
    String family();

    /** Validates a route's configuration and declares what the family can do under it. */
    ConnectorCapabilities initialise(ConnectorConfig config);

    /** Creates the connector for one route. */
    EngineConnector create(ConnectorConfig config, ConnectorContext context);
}
