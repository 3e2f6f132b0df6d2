/**
 * The connector SPI: the only API an engine connector sees and the only one the gateway uses to reach an
 * engine. A connector never depends on the gateway; the gateway never names an engine family.
 */
package io.handoff.connector.spi;
