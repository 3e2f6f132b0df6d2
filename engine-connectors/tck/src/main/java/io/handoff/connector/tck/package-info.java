/**
 * The connector contract suite: one abstract JUnit class, {@link io.handoff.connector.tck.ConnectorContract}, that
 * every engine connector's test subclasses with its {@link io.handoff.connector.spi.ConnectorService} and a
 * {@link io.handoff.connector.tck.SimulatedFleet} of its family's simulators. The suite drives the connector through
 * the SPI only, as the gateway does, and checks the lifecycle promises of the SPI against what the simulated engines
 * report: answers equal to an aggregated run, aborts that reach the engine, failures that say whether anything was
 * sent, and no KV left pinned once the hold the connector declared has ended.
 */
package io.handoff.connector.tck;
