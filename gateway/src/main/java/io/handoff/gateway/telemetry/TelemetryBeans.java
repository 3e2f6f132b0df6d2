package io.handoff.gateway.telemetry;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Wires the metric holders onto the application's Micrometer registry, and tracing onto OpenTelemetry. */
@ApplicationScoped
public class TelemetryBeans {

    @Produces
    @Singleton
    SessionMetrics sessionMetrics(MeterRegistry registry) {
        return new SessionMetrics(registry);
    }

    @Produces
    @Singleton
    HandoffTracing handoffTracing(OpenTelemetry openTelemetry) {
        return new HandoffTracing(openTelemetry);
    }
}
