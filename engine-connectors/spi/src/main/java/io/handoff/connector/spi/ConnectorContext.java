package io.handoff.connector.spi;

import io.vertx.core.Vertx;

import java.time.Clock;

/** What the gateway lends a connector: its Vert.x instance for non-blocking clients, and its clock. */
public interface ConnectorContext {

    Vertx vertx();

    Clock clock();
}
