package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One route as configured, parsed but not yet checked against its connector. Plain data, so that tests and the
 * embedded demo fleet build routes without going through configuration.
 *
 * @param leaseDefault empty: the deployment's default lease
 * @param leaseMax     empty: the shorter of the deployment's maximum and the engine's KV hold
 */
public record RouteSettings(
        String name,
        String model,
        List<String> aliases,
        String engineModel,
        String family,
        List<Endpoint> prefill,
        List<Endpoint> decode,
        ScheduleStyle defaultStyle,
        Set<ScheduleStyle> styles,
        BypassPolicy bypass,
        Optional<Duration> leaseDefault,
        Optional<Duration> leaseMax,
        Duration prefillTimeout,
        Duration decodeIdleTimeout,
        int decodeAttempts,
        int breakerFailures,
        Duration breakerOpenFor,
        int maxOutstandingPerEndpoint,
        int maxInFlight,
        Map<String, String> options) {

    private static final Pattern NAMED = Pattern.compile("^([A-Za-z0-9_.-]+)=(.+)$");

    public RouteSettings {
        aliases = List.copyOf(aliases);
        prefill = List.copyOf(prefill);
        decode = List.copyOf(decode);
        styles = Set.copyOf(styles);
        options = Map.copyOf(options);
    }

    /** The names a client may send for this route's model. */
    public Set<String> modelNames() {
        Set<String> names = new LinkedHashSet<>();
        names.add(model);
        names.addAll(aliases);
        return names;
    }

    static RouteSettings from(String name, RoutingConfig.RouteConfig c) {
        ScheduleStyle defaultStyle = style(name, "default-style", c.defaultStyle());
        Set<ScheduleStyle> styles = new LinkedHashSet<>();
        for (String s : c.styles().orElse(List.of(c.defaultStyle()))) {
            styles.add(style(name, "styles", s));
        }
        return new RouteSettings(name, c.model(), c.aliases().orElse(List.of()), c.engineModel().orElse(c.model()),
                c.family(), endpoints(name, "prefill", c.prefill()), endpoints(name, "decode", c.decode()),
                defaultStyle, styles,
                BypassPolicy.parse(name, c.bypass().when(), c.bypass().shortPromptTokens().orElse(0)),
                c.leaseDefault(), c.leaseMax(), c.prefillTimeout(), c.decodeIdleTimeout(), c.decodeAttempts(),
                c.breakerFailures(), c.breakerOpenFor(), c.maxOutstandingPerEndpoint(), c.maxInFlight(), c.options());
    }

    private static ScheduleStyle style(String route, String key, String value) {
        try {
            return ScheduleStyle.fromConfigName(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route " + route + ": " + key + " '" + value
                    + "' is not one of context-first, generation-first, concurrent");
        }
    }

    /** Parses {@code uri} or {@code name=uri} entries; unnamed ones are called {@code <role>-<index>}. */
    static List<Endpoint> endpoints(String route, String role, List<String> entries) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            String entry = entries.get(i).trim();
            var named = NAMED.matcher(entry);
            String endpointName = named.matches() ? named.group(1) : role + "-" + i;
            String uri = named.matches() ? named.group(2) : entry;
            try {
                out.add(Endpoint.of(endpointName, uri));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("route " + route + ": " + role + " endpoint '" + entry
                        + "' is not a URI: " + e.getMessage());
            }
        }
        return out;
    }
}
