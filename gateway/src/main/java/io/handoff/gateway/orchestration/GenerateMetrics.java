package io.handoff.gateway.orchestration;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Generate requests as metrics: how each was handled (orchestrated per style, bypassed per trigger, refused per
 * error code) and how it ended. Tags stay bounded: routes, styles, triggers, codes and outcomes are finite sets.
 */
@ApplicationScoped
public class GenerateMetrics {

    private final MeterRegistry registry;

    public GenerateMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void accepted(String route, String style) {
        registry.counter("handoff.generate.accepted", "route", route, "style", style).increment();
    }

    public void bypassed(String route, String trigger) {
        registry.counter("handoff.generate.bypassed", "route", route, "trigger", trigger).increment();
    }

    public void refused(String route, String code) {
        registry.counter("handoff.generate.refused", "route", route, "code", code).increment();
    }

    public void ended(String route, String outcome) {
        registry.counter("handoff.generate.ended", "route", route, "outcome", outcome).increment();
    }
}
