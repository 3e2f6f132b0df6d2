package io.handoff.gateway.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Wires tracing onto OpenTelemetry. */
@ApplicationScoped
public class TelemetryBeans {

    @Produces
    @Singleton
    HandoffTracing handoffTracing(OpenTelemetry openTelemetry) {
        return new HandoffTracing(openTelemetry);
    }
}
