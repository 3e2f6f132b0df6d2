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
 * @param prefixLoadBound prefix-affinity's bound, a multiple of the pool's average outstanding requests
 * @param queueMaxWaiting requests that may wait for a slot when the route is full; 0: none wait, they are refused
 * @param queueTimeout    the longest a request waits for a slot
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
        int queueMaxWaiting,
        Duration queueTimeout,
        EndpointPolicy prefillPolicy,
        EndpointPolicy decodePolicy,
        PromptPrefix prefix,
        double prefixLoadBound,
        Map<String, String> options) {

    private static final Pattern NAMED = Pattern.compile("^([A-Za-z0-9_.-]+)=(.+)$");

    /** The documented defaults (docs/api.md, "Routes"), shared by configuration and {@link Builder}. */
    static final String DEFAULT_STYLE = "context-first";
    static final String DEFAULT_PREFILL_TIMEOUT = "60s";
    static final String DEFAULT_DECODE_IDLE_TIMEOUT = "60s";
    static final String DEFAULT_DECODE_ATTEMPTS = "2";
    static final String DEFAULT_BREAKER_FAILURES = "3";
    static final String DEFAULT_BREAKER_OPEN_FOR = "10s";
    static final String DEFAULT_MAX_OUTSTANDING_PER_ENDPOINT = "256";
    static final String DEFAULT_MAX_IN_FLIGHT = "1024";
    static final String DEFAULT_QUEUE_MAX_WAITING = "0";
    static final String DEFAULT_QUEUE_TIMEOUT = "5s";
    static final String DEFAULT_PREFIX_BLOCK_TOKENS = "16";
    static final String DEFAULT_PREFIX_BLOCKS = "8";
    static final String DEFAULT_PREFIX_LOAD_BOUND = "1.25";

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

    /** A route named {@code name} serving {@code model} on the engines of {@code family}, with the defaults. */
    public static Builder builder(String name, String model, String family) {
        return new Builder(name, model, family);
    }

    /** A builder that starts from these settings, to change a few. */
    public Builder toBuilder() {
        return new Builder(name, model, family).aliases(aliases).engineModel(engineModel).prefill(prefill)
                .decode(decode).defaultStyle(defaultStyle).styles(styles).bypass(bypass).leaseDefault(leaseDefault)
                .leaseMax(leaseMax).prefillTimeout(prefillTimeout).decodeIdleTimeout(decodeIdleTimeout)
                .decodeAttempts(decodeAttempts).breakerFailures(breakerFailures).breakerOpenFor(breakerOpenFor)
                .maxOutstandingPerEndpoint(maxOutstandingPerEndpoint).maxInFlight(maxInFlight)
                .queueMaxWaiting(queueMaxWaiting).queueTimeout(queueTimeout)
                .prefillPolicy(prefillPolicy).decodePolicy(decodePolicy).prefix(prefix)
                .prefixLoadBound(prefixLoadBound).options(options);
    }

    static RouteSettings from(String name, RoutingConfig.RouteConfig c) {
        ScheduleStyle defaultStyle = style(name, "default-style", c.defaultStyle());
        Set<ScheduleStyle> styles = new LinkedHashSet<>();
        for (String s : c.styles().orElse(List.of(c.defaultStyle()))) {
            styles.add(style(name, "styles", s));
        }
        return builder(name, c.model(), c.family())
                .aliases(c.aliases().orElse(List.of()))
                .engineModel(c.engineModel().orElse(c.model()))
                .prefill(endpoints(name, "prefill", c.prefill().orElse(List.of())))
                .decode(endpoints(name, "decode", c.decode().orElse(List.of())))
                .defaultStyle(defaultStyle)
                .styles(styles)
                .bypass(BypassPolicy.parse(name, c.bypass().when(), c.bypass().shortPromptTokens().orElse(0),
                        c.bypass().uncachedPromptTokens(), c.bypass().decodeCacheTokens()))
                .leaseDefault(c.leaseDefault())
                .leaseMax(c.leaseMax())
                .prefillTimeout(c.prefillTimeout())
                .decodeIdleTimeout(c.decodeIdleTimeout())
                .decodeAttempts(c.decodeAttempts())
                .breakerFailures(c.breakerFailures())
                .breakerOpenFor(c.breakerOpenFor())
                .maxOutstandingPerEndpoint(c.maxOutstandingPerEndpoint())
                .maxInFlight(c.maxInFlight())
                .queueMaxWaiting(c.queue().maxWaiting())
                .queueTimeout(c.queue().timeout())
                .prefillPolicy(EndpointPolicy.parse(name, "prefill-policy", c.prefillPolicy()))
                .decodePolicy(EndpointPolicy.parse(name, "decode-policy", c.decodePolicy()))
                .prefix(prefix(name, c.prefixAffinity()))
                .prefixLoadBound(c.prefixAffinity().loadBound())
                .options(c.options())
                .build();
    }

    /**
     * Builds settings field by field, starting from the documented defaults: the engines serve {@code model}, one
     * style ({@code context-first}), no bypass, the deployment's leases, and the timeouts, limits and breaker of
     * docs/api.md. Endpoints have no default.
     */
    public static final class Builder {
        private final String name;
        private final String model;
        private final String family;
        private List<String> aliases = List.of();
        private String engineModel;
        private List<Endpoint> prefill = List.of();
        private List<Endpoint> decode = List.of();
        private ScheduleStyle defaultStyle = ScheduleStyle.fromConfigName(DEFAULT_STYLE);
        private Set<ScheduleStyle> styles;
        private BypassPolicy bypass = BypassPolicy.NEVER;
        private Optional<Duration> leaseDefault = Optional.empty();
        private Optional<Duration> leaseMax = Optional.empty();
        private Duration prefillTimeout = seconds(DEFAULT_PREFILL_TIMEOUT);
        private Duration decodeIdleTimeout = seconds(DEFAULT_DECODE_IDLE_TIMEOUT);
        private int decodeAttempts = Integer.parseInt(DEFAULT_DECODE_ATTEMPTS);
        private int breakerFailures = Integer.parseInt(DEFAULT_BREAKER_FAILURES);
        private Duration breakerOpenFor = seconds(DEFAULT_BREAKER_OPEN_FOR);
        private int maxOutstandingPerEndpoint = Integer.parseInt(DEFAULT_MAX_OUTSTANDING_PER_ENDPOINT);
        private int maxInFlight = Integer.parseInt(DEFAULT_MAX_IN_FLIGHT);
        private int queueMaxWaiting = Integer.parseInt(DEFAULT_QUEUE_MAX_WAITING);
        private Duration queueTimeout = seconds(DEFAULT_QUEUE_TIMEOUT);
        private EndpointPolicy prefillPolicy = EndpointPolicy.LEAST_OUTSTANDING;
        private EndpointPolicy decodePolicy = EndpointPolicy.LEAST_OUTSTANDING;
        private PromptPrefix prefix = PromptPrefix.DEFAULT;
        private double prefixLoadBound = Double.parseDouble(DEFAULT_PREFIX_LOAD_BOUND);
        private Map<String, String> options = Map.of();

        private Builder(String name, String model, String family) {
            this.name = name;
            this.model = model;
            this.family = family;
            this.engineModel = model;
        }

        public Builder aliases(List<String> value) {
            aliases = value;
            return this;
        }

        public Builder engineModel(String value) {
            engineModel = value;
            return this;
        }

        public Builder prefill(List<Endpoint> value) {
            prefill = value;
            return this;
        }

        public Builder decode(List<Endpoint> value) {
            decode = value;
            return this;
        }

        public Builder defaultStyle(ScheduleStyle value) {
            defaultStyle = value;
            return this;
        }

        /** The styles a request may name; the default style alone when never set. */
        public Builder styles(Set<ScheduleStyle> value) {
            styles = value;
            return this;
        }

        public Builder bypass(BypassPolicy value) {
            bypass = value;
            return this;
        }

        public Builder leaseDefault(Optional<Duration> value) {
            leaseDefault = value;
            return this;
        }

        public Builder leaseMax(Optional<Duration> value) {
            leaseMax = value;
            return this;
        }

        public Builder prefillTimeout(Duration value) {
            prefillTimeout = value;
            return this;
        }

        public Builder decodeIdleTimeout(Duration value) {
            decodeIdleTimeout = value;
            return this;
        }

        public Builder decodeAttempts(int value) {
            decodeAttempts = value;
            return this;
        }

        public Builder breakerFailures(int value) {
            breakerFailures = value;
            return this;
        }

        public Builder breakerOpenFor(Duration value) {
            breakerOpenFor = value;
            return this;
        }

        public Builder maxOutstandingPerEndpoint(int value) {
            maxOutstandingPerEndpoint = value;
            return this;
        }

        public Builder maxInFlight(int value) {
            maxInFlight = value;
            return this;
        }

        public Builder queueMaxWaiting(int value) {
            queueMaxWaiting = value;
            return this;
        }

        public Builder queueTimeout(Duration value) {
            queueTimeout = value;
            return this;
        }

        public Builder prefillPolicy(EndpointPolicy value) {
            prefillPolicy = value;
            return this;
        }

        public Builder decodePolicy(EndpointPolicy value) {
            decodePolicy = value;
            return this;
        }

        public Builder prefix(PromptPrefix value) {
            prefix = value;
            return this;
        }

        public Builder prefixLoadBound(double value) {
            prefixLoadBound = value;
            return this;
        }

        public Builder options(Map<String, String> value) {
            options = value;
            return this;
        }

        public RouteSettings build() {
            return new RouteSettings(name, model, aliases, engineModel, family, prefill, decode, defaultStyle,
                    styles == null ? Set.of(defaultStyle) : styles, bypass, leaseDefault, leaseMax, prefillTimeout,
                    decodeIdleTimeout, decodeAttempts, breakerFailures, breakerOpenFor, maxOutstandingPerEndpoint,
                    maxInFlight, queueMaxWaiting, queueTimeout, prefillPolicy, decodePolicy, prefix, prefixLoadBound, options);
        }

        /** The defaults above are whole seconds, in configuration's spelling ({@code 60s}). */
        private static Duration seconds(String value) {
            return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
        }
    }

    private static ScheduleStyle style(String route, String key, String value) {
        try {
            return ScheduleStyle.fromConfigName(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route " + route + ": " + key + " '" + value
                    + "' is not one of context-first, generation-first, concurrent");
        }
    }

    private static PromptPrefix prefix(String route, RoutingConfig.PrefixAffinity c) {
        try {
            return new PromptPrefix(c.blockTokens(), c.blocks());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route " + route + ": prefix-affinity.block-tokens and "
                    + "prefix-affinity.blocks must be at least 1");
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
