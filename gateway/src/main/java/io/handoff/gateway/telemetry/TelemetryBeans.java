package io.handoff.gateway.telemetry;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Wires the metric holders onto the application's Micrometer registry. */
@ApplicationScoped
public class TelemetryBeans {

    @Produces
    @Singleton
    SessionMetrics sessionMetrics(MeterRegistry registry) {
        return new SessionMetrics(registry);
    }
}
