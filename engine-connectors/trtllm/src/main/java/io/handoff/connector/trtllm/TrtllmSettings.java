package io.handoff.connector.trtllm;

import io.handoff.connector.openai.family.RouteOptions;
import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ScheduleStyle;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A route's TensorRT-LLM options, validated.
 *
 * <ul>
 * <li>{@code schedule-styles}: comma-separated subset of {@code context-first,generation-first} (default both).
 * Generation-first needs the Python cache transceiver on the workers.</li>
 * <li>{@code kv-transfer-timeout-ms}: the workers' {@code cache_transceiver_config.kv_transfer_timeout_ms}
 * (default 60000). It must be set and finite: older releases without a timeout hold a parked context forever, and
 * the gateway refuses a route whose engine hold has no end.</li>
 * <li>{@code auth-key}: the workers' {@code internal_request_auth_key}; when set, every leg that carries
 * {@code encoded_opaque_state} or {@code ctx_info_endpoint} is signed with {@code x-trtllm-disagg-auth}.</li>
 * <li>{@code node-id}: 0..255, this gateway replica's bits in the minted {@code disagg_request_id} (default: random).
 * Replicas that share workers must have distinct node ids.</li>
 * <li>{@code decode-margin-ms}: how long before the context's hold may end a context-first generation is no longer
 * sent (default 2000)</li>
 * <li>{@code connect-timeout-ms} (5000), {@code idle-timeout-seconds} (300), {@code probe-timeout-ms} (5000),
 * {@code max-connections} per endpoint (1024: each streaming leg holds one), {@code prefill-max-connections} per
 * endpoint for the context legs (default: max-connections)</li>
 * </ul>
 */
public record TrtllmSettings(Set<ScheduleStyle> styles, Duration hold, Optional<String> authKey, int nodeId,
        Duration decodeMargin, ClientSettings client, Duration probeTimeout) {

    static final Set<String> KNOWN = Set.of("schedule-styles", "kv-transfer-timeout-ms", "auth-key", "node-id",
            "decode-margin-ms", "connect-timeout-ms", "idle-timeout-seconds", "probe-timeout-ms",
            RouteOptions.MAX_CONNECTIONS, RouteOptions.PREFILL_MAX_CONNECTIONS);

    public TrtllmSettings {
        styles = Set.copyOf(styles);
    }

    public static TrtllmSettings from(ConnectorConfig config) {
        Map<String, String> options = config.options();
        RouteOptions.requireKnown(config, "trtllm", KNOWN);
        Set<ScheduleStyle> styles = EnumSet.noneOf(ScheduleStyle.class);
        String raw = options.getOrDefault("schedule-styles", "context-first,generation-first");
        for (String s : raw.split(",")) {
            if (s.isBlank()) {
                continue;
            }
            ScheduleStyle style;
            try {
                style = ScheduleStyle.fromConfigName(s);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("route " + config.route() + ": schedule-styles: unknown style '"
                        + s.trim() + "'");
            }
            if (style == ScheduleStyle.CONCURRENT) {
                throw new IllegalArgumentException("route " + config.route() + ": schedule-styles: trtllm-serve has"
                        + " no concurrent style (only context_first and generation_first)");
            }
            styles.add(style);
        }
        if (styles.isEmpty()) {
            throw new IllegalArgumentException("route " + config.route() + ": schedule-styles names no style");
        }
        String timeout = options.get("kv-transfer-timeout-ms");
        if (timeout != null && (timeout.isBlank() || timeout.trim().equals("null") || timeout.trim().startsWith("-")
                || timeout.trim().equals("0"))) {
            throw new IllegalArgumentException("route " + config.route() + ": kv-transfer-timeout-ms must be a"
                    + " positive number of milliseconds: without kv_transfer_timeout_ms a parked context is never"
                    + " freed (no release API), so the route would leak KV");
        }
        Duration hold = Duration.ofMillis(RouteOptions.positive(config, "kv-transfer-timeout-ms", 60_000));
        Optional<String> key = Optional.ofNullable(options.get("auth-key"));
        if (key.isPresent() && key.get().isEmpty()) {
            throw new IllegalArgumentException("route " + config.route() + ": auth-key is empty");
        }
        long node = options.containsKey("node-id") ? RouteOptions.nonNegative(config, "node-id", 0)
                : new SecureRandom().nextInt(256);
        if (node > 255) {
            throw new IllegalArgumentException("route " + config.route() + ": node-id must be in 0..255");
        }
        Duration margin = Duration.ofMillis(RouteOptions.nonNegative(config, "decode-margin-ms", 2000));
        if (margin.compareTo(hold) >= 0) {
            throw new IllegalArgumentException("route " + config.route() + ": decode-margin-ms must be below"
                    + " kv-transfer-timeout-ms");
        }
        ClientSettings client = RouteOptions.client(config);
        return new TrtllmSettings(styles, hold, key, (int) node, margin, client,
                Duration.ofMillis(RouteOptions.positive(config, "probe-timeout-ms", 5000)));
    }

    @Override
    public String toString() {
        // never print the key
        return "TrtllmSettings[styles=" + styles + ", hold=" + hold + ", auth=" + authKey.isPresent() + ", nodeId="
                + nodeId + "]";
    }
}
