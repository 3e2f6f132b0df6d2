package io.handoff.gateway.orchestration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Generate requests as metrics: how each was handled (orchestrated per style, bypassed per trigger, refused per
 * error code and {@link RefusalReason reason}), how it ended, and how long its client waited for the first token.
 * Tags stay bounded: routes, styles, triggers, codes, reasons and outcomes are finite sets, so each meter is looked
 * up in the registry once and kept (a lookup by tags on every request costs more than the count).
 */
@ApplicationScoped
public class GenerateMetrics {

    /**
     * The first-token histogram's buckets: fixed, few, and spanning a short prompt on an idle fleet to a queued decode,
     * so that dashboards can take quantiles across replicas (a percentile computed per replica cannot be summed).
     */
    static final Duration[] FIRST_TOKEN_BUCKETS = {Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
            Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
            Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

    private final MeterRegistry registry;
    private final Map<Key, Counter> counters = new ConcurrentHashMap<>();
    private final Map<Key, Timer> firstTokens = new ConcurrentHashMap<>();

    public GenerateMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private record Key(String name, String route, String tag, String value, String otherTag, String otherValue) {

        Key(String name, String route, String tag, String value) {
            this(name, route, tag, value, null, null);
        }

        String[] tags() {
            return otherTag == null ? new String[] {"route", route, tag, value}
                    : new String[] {"route", route, tag, value, otherTag, otherValue};
        }
    }

    public void accepted(String route, String style) {
        count(new Key("handoff.generate.accepted", route, "style", style));
    }

    public void bypassed(String route, String trigger) {
        count(new Key("handoff.generate.bypassed", route, "trigger", trigger));
    }

    /** A refusal before acceptance: {@code code} the client's OpenEngine error code, {@code reason} why. */
    public void refused(String route, String code, String reason) {
        count(new Key("handoff.generate.refused", route, "code", code, "reason", reason));
    }

    /** An accepted request's session ended: {@code style} as {@link #accepted} names it, the session's end state. */
    public void ended(String route, String style, String outcome) {
        count(new Key("handoff.generate.ended", route, "style", style, "outcome", outcome));
    }

    /**
     * The timer of the wait from a request's arrival to its first token relayed to the client, for a route and how
     * the request runs there (a style, or {@code bypass}).
     */
    Timer firstToken(String route, String style) {
        return firstTokens.computeIfAbsent(new Key("handoff.generate.first.token", route, "style", style),
                k -> Timer.builder(k.name()).tags(k.tags())
                        .description("Time from a Generate's arrival to its first token relayed to the client")
                        .serviceLevelObjectives(FIRST_TOKEN_BUCKETS).register(registry));
    }

    private void count(Key key) {
        counters.computeIfAbsent(key, k -> registry.counter(k.name(), k.tags())).increment();
    }
}
