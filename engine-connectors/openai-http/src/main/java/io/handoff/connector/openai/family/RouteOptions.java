package io.handoff.connector.openai.family;

import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.spi.ConnectorConfig;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * A route's options as a family reads them, each failure naming the route and the option, so that a deployment stops
 * at start with a message that says what to fix rather than running with a default the operator did not mean.
 */
public final class RouteOptions {

    private RouteOptions() {
    }

    /** Refuses an option the family does not know: a misspelt name would otherwise leave its default in force. */
    public static void requireKnown(ConnectorConfig config, String family, Set<String> known) {
        for (String name : config.options().keySet()) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException("route " + config.route() + ": unknown " + family + " option '"
                        + name + "' (known: " + String.join(", ", new TreeSet<>(known)) + ")");
            }
        }
    }

    /** The option as a whole number above 0, or {@code fallback} when the route does not set it. */
    public static long positive(ConnectorConfig config, String name, long fallback) {
        long value = nonNegative(config, name, fallback);
        if (value == 0) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name + " must be above 0");
        }
        return value;
    }

    /** The option as a whole number of 0 or more, or {@code fallback} when the route does not set it. */
    public static long nonNegative(ConnectorConfig config, String name, long fallback) {
        String raw = config.options().get(name);
        if (raw == null) {
            return fallback;
        }
        try {
            long value = Long.parseLong(raw.trim());
            if (value < 0) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name
                    + " must be a whole number >= 0, not '" + raw + "'");
        }
    }

    /** The option naming the most connections the route's client keeps to one endpoint. */
    public static final String MAX_CONNECTIONS = "max-connections";

    /** The option naming the most connections the route's prefill legs keep to one endpoint. */
    public static final String PREFILL_MAX_CONNECTIONS = "prefill-max-connections";

    /**
     * The engine client of the route: {@code connect-timeout-ms} (default 5000), {@code idle-timeout-seconds}
     * (default 300: the longest silence on a leg), {@code max-connections} per endpoint ({@link #maxConnections}) and
     * {@code prefill-max-connections} (default: {@code max-connections}) for the prefill legs' own client.
     */
    public static ClientSettings client(ConnectorConfig config) {
        return client(config, Duration.ofSeconds(positive(config, "idle-timeout-seconds", 300)));
    }

    /** The engine client of the route with a family's own idle timeout. */
    public static ClientSettings client(ConnectorConfig config, Duration idleTimeout) {
        int connections = connections(config, MAX_CONNECTIONS, ClientSettings.DEFAULT_MAX_CONNECTIONS);
        return new ClientSettings(Duration.ofMillis(positive(config, "connect-timeout-ms", 5000)), idleTimeout,
                connections, connections(config, PREFILL_MAX_CONNECTIONS, connections));
    }

    /**
     * A connection limit per endpoint, {@code max-connections} (default {@value ClientSettings#DEFAULT_MAX_CONNECTIONS})
     * or {@code prefill-max-connections}: every streaming leg holds one connection to its engine for its whole life,
     * so this bounds the legs one endpoint can serve at once through this replica; a leg beyond it waits for a
     * connection to come free.
     */
    private static int connections(ConnectorConfig config, String name, int fallback) {
        long value = positive(config, name, fallback);
        if (value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name + " must be at most "
                    + Integer.MAX_VALUE);
        }
        return (int) value;
    }
}
