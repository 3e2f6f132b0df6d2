package io.handoff.gateway.orchestration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Generate requests as metrics: how each was handled (orchestrated per style, bypassed per trigger, refused per
 * error code) and how it ended. Tags stay bounded: routes, styles, triggers, codes and outcomes are finite sets, so
 * each counter is looked up in the registry once and kept (a lookup by tags on every request costs more than the
 * count).
 */
@ApplicationScoped
public class GenerateMetrics {

    private final MeterRegistry registry;
    private final Map<Key, Counter> counters = new ConcurrentHashMap<>();

    public GenerateMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private record Key(String name, String route, String tag, String value) {
    }

    public void accepted(String route, String style) {
        count("handoff.generate.accepted", route, "style", style);
    }

    public void bypassed(String route, String trigger) {
        count("handoff.generate.bypassed", route, "trigger", trigger);
    }

    public void refused(String route, String code) {
        count("handoff.generate.refused", route, "code", code);
    }

    public void ended(String route, String outcome) {
        count("handoff.generate.ended", route, "outcome", outcome);
    }

    private void count(String name, String route, String tag, String value) {
        counters.computeIfAbsent(new Key(name, route, tag, value),
                k -> registry.counter(k.name(), "route", k.route(), k.tag(), k.value())).increment();
    }
}
