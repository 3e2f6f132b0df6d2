package io.handoff.connector.sglang;

import io.handoff.connector.openai.family.RouteOptions;
import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A route's SGLang options, validated. SGLang's KV timers are environment variables of the engines, invisible through
 * its HTTP API, so the route states them; the defaults are SGLang's.
 *
 * <ul>
 * <li>{@code bootstrap-port}: the producers' {@code --disaggregation-bootstrap-port} (default 8998);
 * {@code bootstrap-port.<prefill endpoint name>} overrides it for one producer</li>
 * <li>{@code bootstrap-host.<prefill endpoint name>}: the host a consumer reaches that producer's bootstrap server at
 * (default: the host of the endpoint's URI)</li>
 * <li>{@code bootstrap-timeout-seconds}: {@code SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT} of the producers (300)</li>
 * <li>{@code waiting-timeout-seconds}: {@code SGLANG_DISAGGREGATION_WAITING_TIMEOUT} of the consumers (300)</li>
 * <li>{@code connect-timeout-ms} (5000), {@code idle-timeout-seconds} (default: the bootstrap timeout plus 30 s, since
 * a prefill answers only once its decode took the KV), {@code probe-timeout-ms} (5000), {@code max-connections}
 * per endpoint (1024: each streaming leg holds one), {@code prefill-max-connections} per endpoint for the prefill
 * legs (default: max-connections)</li>
 * <li>{@code room-retention-seconds}: how long a minted room stays reserved in this process when its legs never end
 * (default 3600)</li>
 * </ul>
 */
public record SglangSettings(int defaultBootstrapPort, Map<String, Integer> bootstrapPorts,
        Map<String, String> bootstrapHosts, Duration bootstrapTimeout, Duration waitingTimeout,
        ClientSettings client, Duration probeTimeout, Duration roomRetention) {

    static final int DEFAULT_BOOTSTRAP_PORT = 8998;
    private static final Set<String> KNOWN = Set.of("bootstrap-port", "bootstrap-timeout-seconds",
            "waiting-timeout-seconds", "connect-timeout-ms", "idle-timeout-seconds", "probe-timeout-ms",
            "room-retention-seconds", RouteOptions.MAX_CONNECTIONS, RouteOptions.PREFILL_MAX_CONNECTIONS);

    public SglangSettings {
        bootstrapPorts = Map.copyOf(bootstrapPorts);
        bootstrapHosts = Map.copyOf(bootstrapHosts);
    }

    public static SglangSettings from(ConnectorConfig config) {
        Set<String> prefills = new TreeSet<>();
        config.prefillPool().forEach(e -> prefills.add(e.name()));
        Map<String, Integer> ports = new HashMap<>();
        Map<String, String> hosts = new HashMap<>();
        for (Map.Entry<String, String> option : config.options().entrySet()) {
            String name = option.getKey();
            if (KNOWN.contains(name)) {
                continue;
            }
            String endpoint = name.startsWith("bootstrap-port.") ? name.substring("bootstrap-port.".length())
                    : name.startsWith("bootstrap-host.") ? name.substring("bootstrap-host.".length()) : null;
            if (endpoint == null) {
                throw new IllegalArgumentException("route " + config.route() + ": unknown sglang option '" + name
                        + "' (known: " + String.join(", ", new TreeSet<>(KNOWN))
                        + ", bootstrap-port.<prefill>, bootstrap-host.<prefill>)");
            }
            if (!prefills.contains(endpoint)) {
                throw new IllegalArgumentException("route " + config.route() + ": " + name
                        + " names no prefill endpoint of the route (prefill pool: " + prefills + ")");
            }
            if (name.startsWith("bootstrap-port.")) {
                ports.put(endpoint, port(config, name, option.getValue()));
            } else {
                if (option.getValue().isBlank()) {
                    throw new IllegalArgumentException("route " + config.route() + ": " + name + " is empty");
                }
                hosts.put(endpoint, option.getValue().trim());
            }
        }
        int port = config.option("bootstrap-port").map(v -> port(config, "bootstrap-port", v))
                .orElse(DEFAULT_BOOTSTRAP_PORT);
        Duration bootstrap = Duration.ofSeconds(positive(config, "bootstrap-timeout-seconds", 300));
        Duration waiting = Duration.ofSeconds(positive(config, "waiting-timeout-seconds", 300));
        ClientSettings client = RouteOptions.client(config,
                Duration.ofSeconds(positive(config, "idle-timeout-seconds", bootstrap.toSeconds() + 30)));
        return new SglangSettings(port, ports, hosts, bootstrap, waiting, client,
                Duration.ofMillis(positive(config, "probe-timeout-ms", 5000)),
                Duration.ofSeconds(positive(config, "room-retention-seconds", 3600)));
    }

    /** The longest an engine keeps KV for a handoff whose peer never comes: the larger of the two SGLang timers. */
    public Duration hold() {
        return bootstrapTimeout.compareTo(waitingTimeout) >= 0 ? bootstrapTimeout : waitingTimeout;
    }

    int bootstrapPort(Endpoint prefill) {
        return bootstrapPorts.getOrDefault(prefill.name(), defaultBootstrapPort);
    }

    String bootstrapHost(Endpoint prefill) {
        String configured = bootstrapHosts.get(prefill.name());
        if (configured != null) {
            return configured;
        }
        String h = prefill.uri().getHost();
        if (h == null) {
            throw new IllegalArgumentException("prefill endpoint " + prefill.name() + " has no host in " + prefill.uri());
        }
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    private static int port(ConnectorConfig config, String name, String raw) {
        long value = parse(config, name, raw);
        if (value < 1 || value > 65535) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name + " must be a port (1-65535), not '"
                    + raw + "'");
        }
        return (int) value;
    }

    private static long positive(ConnectorConfig config, String name, long fallback) {
        String raw = config.options().get(name);
        if (raw == null) {
            return fallback;
        }
        long value = parse(config, name, raw);
        if (value <= 0) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name + " must be above 0");
        }
        return value;
    }

    private static long parse(ConnectorConfig config, String name, String raw) {
        try {
            return Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("route " + config.route() + ": " + name + " must be a whole number, not '"
                    + raw + "'");
        }
    }
}
