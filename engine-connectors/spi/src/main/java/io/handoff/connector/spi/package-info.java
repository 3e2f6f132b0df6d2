/**
 * The connector SPI: the only API an engine connector sees and the only one the gateway uses to reach an
 * engine. A connector never depends on the gateway; the gateway never names an engine family.
 *
 * <h2>For a plugin author</h2>
 * <ol>
 * <li>Implement {@link io.handoff.connector.spi.ConnectorService} (configuration and capabilities) and
 * {@link io.handoff.connector.spi.EngineConnector} (the legs), and list the service in
 * {@code META-INF/services/io.handoff.connector.spi.ConnectorService}.</li>
 * <li>Declare honestly in {@link io.handoff.connector.spi.ConnectorCapabilities} what the engine does natively:
 * the gateway refuses everything else before anything is allocated.</li>
 * <li>Speak openengine.v1 on the gateway's side: requests come as {@code GenerateRequest}, decode events go back
 * as {@code GenerateResponse}, failures as {@link io.handoff.connector.spi.EngineException} with an
 * {@code ErrorCode}.</li>
 * <li>Send {@link io.handoff.connector.spi.Handoff#forward()} with every call a leg makes to its engine, verbatim
 * (HTTP headers or gRPC metadata): it is the leg's trace context.</li>
 * <li>Report what the engine still holds after each leg as {@link io.handoff.connector.spi.HeldKv}; the gateway
 * keeps it as a cleanup obligation and calls {@link io.handoff.connector.spi.EngineConnector#discharge} once the
 * session is over, from whichever replica is alive.</li>
 * <li>Write the mapping document in {@code mappings/} and pass the connector contract suite against the family's
 * simulator.</li>
 * </ol>
 */
package io.handoff.connector.spi;
