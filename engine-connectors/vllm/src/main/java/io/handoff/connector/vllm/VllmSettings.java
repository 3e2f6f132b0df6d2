package io.handoff.connector.vllm;

import io.handoff.connector.openai.family.RouteOptions;
import io.handoff.connector.openai.http.ClientSettings;
import io.handoff.connector.spi.ConnectorConfig;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A route's vLLM options, validated. {@code hold-mode} is required: the producer's hold cannot be observed through
 * vLLM's HTTP API, and guessing wrong either hides a leak (assuming 30 s on a 480 s build) or sends decodes to blocks
 * that are already freed (assuming 480 s on a lease build), which vLLM answers with wrong output.
 *
 * <ul>
 * <li>{@code hold-mode}: {@code fixed} or {@code lease}</li>
 * <li>{@code hold-seconds}: the producers' {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} (fixed; default 480)</li>
 * <li>{@code lease-seconds}: the producers' {@code kv_lease_duration} (lease; default 30)</li>
 * <li>{@code decode-margin-ms}: how long before the hold may end a decode is no longer sent (default 2000)</li>
 * <li>{@code connect-timeout-ms} (default 5000), {@code idle-timeout-seconds} (default 300: longest silence on a
 * leg), {@code probe-timeout-ms} (default 5000), {@code max-connections} per endpoint (default 1024: each streaming
 * leg holds one), {@code prefill-max-connections} per endpoint for the prefill legs (default: max-connections)</li>
 * </ul>
 */
public record VllmSettings(HoldMode holdMode, Duration hold, Duration decodeMargin, ClientSettings client,
        Duration probeTimeout) {

    private static final Set<String> KNOWN = Set.of("hold-mode", "hold-seconds", "lease-seconds", "decode-margin-ms",
            "connect-timeout-ms", "idle-timeout-seconds", "probe-timeout-ms", RouteOptions.MAX_CONNECTIONS,
            RouteOptions.PREFILL_MAX_CONNECTIONS);

    public static VllmSettings from(ConnectorConfig config) {
        Map<String, String> options = config.options();
        RouteOptions.requireKnown(config, "vllm", KNOWN);
        String mode = options.get("hold-mode");
        if (mode == null) {
            throw new IllegalArgumentException("route " + config.route() + ": hold-mode is required (fixed for vLLM"
                    + " builds with VLLM_NIXL_ABORT_REQUEST_TIMEOUT, lease for builds with kv_lease_duration)");
        }
        HoldMode holdMode;
        try {
            holdMode = HoldMode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route " + config.route() + ": hold-mode must be fixed or lease, not '"
                    + mode + "'");
        }
        String other = holdMode == HoldMode.FIXED ? "lease-seconds" : "hold-seconds";
        if (options.containsKey(other)) {
            throw new IllegalArgumentException("route " + config.route() + ": " + other + " does not apply to hold-mode="
                    + mode);
        }
        Duration hold = holdMode == HoldMode.FIXED
                ? Duration.ofSeconds(RouteOptions.positive(config, "hold-seconds", 480))
                : Duration.ofSeconds(RouteOptions.positive(config, "lease-seconds", 30));
        ClientSettings client = RouteOptions.client(config);
        Duration margin = Duration.ofMillis(RouteOptions.nonNegative(config, "decode-margin-ms", 2000));
        return new VllmSettings(holdMode, hold, margin, client,
                Duration.ofMillis(RouteOptions.positive(config, "probe-timeout-ms", 5000)));
    }

    /**
     * The part of the hold a decode must not start in. With leases the consumer renews only from its first heartbeat,
     * which comes one heartbeat period (a sixth of the lease) after it received the request; a decode that arrives
     * later than lease minus that period finds the blocks gone.
     */
    public Duration unsafeTail() {
        Duration heartbeat = holdMode == HoldMode.LEASE ? hold.dividedBy(6) : Duration.ZERO;
        return heartbeat.plus(decodeMargin);
    }
}
