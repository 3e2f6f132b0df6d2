package io.handoff.connector.spi;

import io.vertx.core.Vertx;

import java.time.Clock;

/** What the gateway lends a connector: its Vert.x instance for non-blocking clients, and its clock. */
public interface ConnectorContext {

    Vertx vertx();

    Clock clock();

    /** The context of a gateway (or a test) that lends this Vert.x instance and this clock. */
    static ConnectorContext of(Vertx vertx, Clock clock) {
        return new ConnectorContext() {
            @Override
            public Vertx vertx() {
                return vertx;
            }

            @Override
            public Clock clock() {
                return clock;
            }
        };
    }
}
