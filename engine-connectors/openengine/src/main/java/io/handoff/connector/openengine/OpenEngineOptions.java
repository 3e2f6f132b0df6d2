package io.handoff.connector.openengine;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The route options of the openengine family, validated without I/O.
 *
 * <ul>
 * <li>{@code hold-seconds} (default 60): how long the prefill engine keeps parked KV that no decode pulled. It is
 * the engine's setting (TensorRT-LLM: {@code kv_transfer_timeout_ms}, 60 s in current code), not ours: set it to what
 * the engines run with. The upstream schema does not report it, so the connector cannot check it.</li>
 * <li>{@code abort-cleanup} (default false): the engines free parked KV on {@code Control.Abort(kv_session)}
 * ({@code KvConnectorInfo.supports_abort_cleanup}); discharge then releases early. The probe marks an endpoint
 * unhealthy when the engine does not report the capability the route claims.</li>
 * <li>{@code max-outputs} (default 1): most {@code sampling.num_sequences} a handoff may ask for.</li>
 * <li>{@code prefill-timeout-ms}, {@code decode-timeout-ms} (default 0 = none): gRPC deadline of each leg.</li>
 * <li>{@code control-timeout-ms} (default 5000): deadline of Control RPCs (abort, probe, discharge).</li>
 * </ul>
 */
public record OpenEngineOptions(Duration hold, boolean abortCleanup, int maxOutputs, Duration prefillTimeout,
        Duration decodeTimeout, Duration controlTimeout) {

    static final Set<String> NAMES = Set.of("hold-seconds", "abort-cleanup", "max-outputs", "prefill-timeout-ms",
        "decode-timeout-ms", "control-timeout-ms");

    /** Validates a route; a failure names the setting and the reason. */
    public static OpenEngineOptions from(ConnectorConfig config) {
        for (String name : config.options().keySet()) {
            if (!NAMES.contains(name)) {
                throw new IllegalArgumentException("openengine: unknown option '" + name + "' (known: " + NAMES + ")");
            }
        }
        checkPool("prefill", config.prefillPool());
        checkPool("decode", config.decodePool());
        Map<String, String> o = config.options();
        long holdSeconds = positive(o, "hold-seconds", 60);
        String cleanup = o.getOrDefault("abort-cleanup", "false");
        if (!cleanup.equals("true") && !cleanup.equals("false")) {
            throw new IllegalArgumentException("openengine: abort-cleanup must be true or false, not '" + cleanup + "'");
        }
        return new OpenEngineOptions(Duration.ofSeconds(holdSeconds), Boolean.parseBoolean(cleanup),
            (int) positive(o, "max-outputs", 1), Duration.ofMillis(nonNegative(o, "prefill-timeout-ms", 0)),
            Duration.ofMillis(nonNegative(o, "decode-timeout-ms", 0)),
            Duration.ofMillis(positive(o, "control-timeout-ms", 5000)));
    }

    private static void checkPool(String pool, List<Endpoint> endpoints) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("openengine: the " + pool + " pool is empty (context-first needs both)");
        }
        for (Endpoint e : endpoints) {
            if (!"grpc".equals(e.uri().getScheme()) || e.uri().getHost() == null || e.uri().getPort() <= 0) {
                throw new IllegalArgumentException("openengine: endpoint " + e.name() + " of the " + pool
                    + " pool must be grpc://host:port, not " + e.uri());
            }
        }
    }

    private static long positive(Map<String, String> o, String name, long dflt) {
        long v = number(o, name, dflt);
        if (v <= 0) {
            throw new IllegalArgumentException("openengine: " + name + " must be positive, not " + v);
        }
        return v;
    }

    private static long nonNegative(Map<String, String> o, String name, long dflt) {
        long v = number(o, name, dflt);
        if (v < 0) {
            throw new IllegalArgumentException("openengine: " + name + " must not be negative, not " + v);
        }
        return v;
    }

    private static long number(Map<String, String> o, String name, long dflt) {
        String s = o.get(name);
        if (s == null) {
            return dflt;
        }
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("openengine: " + name + " must be a whole number, not '" + s + "'");
        }
    }
}
