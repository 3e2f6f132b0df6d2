package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.openengine.v1.EngineRole;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Negotiates a route with its connector: the family must exist, the connector must accept the options, and every
 * setting must be something the engine can do natively. A mismatch is an {@link IllegalArgumentException} whose
 * message names the route, the setting and the reason; the gateway does not start with it. Nothing is weakened.
 */
public final class RouteFactory {

    /** The names configuration gives endpoints ({@code name=uri}); an added endpoint's name is held to the same. */
    private static final Pattern ENDPOINT_NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    private final Map<String, ConnectorService> families;
    private final SessionPolicy deployment;
    private final ProbeRunner probes;

    /** @param probes how every pool it makes runs its probes: in the gateway, under the {@link ProbeGuard} */
    RouteFactory(Map<String, ConnectorService> families, SessionPolicy deployment, ProbeRunner probes) {
        this.families = Map.copyOf(families);
        this.deployment = deployment;
        this.probes = probes;
    }

    /** Checks the route without creating a connector; returns what the connector declares for it. */
    public ConnectorCapabilities negotiate(RouteSettings s) {
        return negotiate(s, Set.of());
    }

    /**
     * Checks the route as {@link #negotiate(RouteSettings)} does, where the pools named in {@code discovered}
     * ({@code prefill}, {@code decode}) take endpoints while the gateway runs and so may start with none: until one
     * joins, such a pool refuses as one whose endpoints were all retired.
     */
    public ConnectorCapabilities negotiate(RouteSettings s, Set<String> discovered) {
        ConnectorService service = service(s);
        if (s.prefill().isEmpty() && !discovered.contains("prefill")
                || s.decode().isEmpty() && !discovered.contains("decode")) {
            throw refuse(s, "prefill and decode", "both pools need at least one endpoint, configured or discovered");
        }
        Map<String, URI> uris = new HashMap<>();
        for (Endpoint e : Stream.concat(s.prefill().stream(), s.decode().stream()).toList()) {
            URI other = uris.putIfAbsent(e.name(), e.uri());
            if (other != null && !other.equals(e.uri())) {
                // cleanup obligations name their engine by endpoint name: one name must mean one engine
                throw refuse(s, "prefill and decode", "endpoint name '" + e.name() + "' names both " + other
                        + " and " + e.uri());
            }
        }
        if (!s.styles().contains(s.defaultStyle())) {
            throw refuse(s, "default-style", s.defaultStyle().configName() + " is not among styles "
                    + names(s.styles()));
        }
        ConnectorCapabilities caps = service.initialise(config(s));
        for (ScheduleStyle style : s.styles()) {
            if (!caps.nativeStyles().contains(style)) {
                throw refuse(s, "styles", style.configName() + " is not supported natively by " + s.family()
                        + " (it supports " + names(caps.nativeStyles()) + "); Handoff does not emulate styles");
            }
            if (!deployment.supportedStyles().contains(style)) {
                throw refuse(s, "styles", style.configName() + " is not among handoff.session.supported-styles");
            }
        }
        if (!s.bypass().never() && !caps.localPrefill()) {
            throw refuse(s, s.bypass().has(BypassPolicy.Trigger.UNCACHED_PROMPT) ? "bypass.uncached-prompt-tokens"
                    : "bypass.when", s.family() + " decode endpoints cannot prefill locally as configured, "
                    + "so no request can bypass; set bypass.when=never and leave bypass.uncached-prompt-tokens unset");
        }
        if (s.bypass().has(BypassPolicy.Trigger.UNCACHED_PROMPT) && s.bypass().uncachedPromptTokens() < 1) {
            throw refuse(s, "bypass.uncached-prompt-tokens", s.bypass().uncachedPromptTokens()
                    + " must be at least 1 (unset it to turn the trigger off)");
        }
        if (s.bypass().decodeCacheTokens() < s.prefix().blockTokens()) {
            throw refuse(s, "bypass.decode-cache-tokens", s.bypass().decodeCacheTokens() + " must hold at least "
                    + "one block of prefix-affinity.block-tokens (" + s.prefix().blockTokens() + " tokens)");
        }
        if (s.decodePolicy() == EndpointPolicy.PREFIX_AFFINITY) {
            // a decode endpoint receives the prompt's KV with the handoff instead of computing it, so there is no
            // cache of the prompt's prefix there for affinity to find
            throw refuse(s, "decode-policy", "prefix-affinity is for prefill pools: a decode endpoint receives the "
                    + "prompt's KV and does not compute it; use least-outstanding or power-of-two");
        }
        if (!(s.prefixLoadBound() > 1.0) || Double.isInfinite(s.prefixLoadBound())) {
            throw refuse(s, "prefix-affinity.load-bound", s.prefixLoadBound() + " must be a number above 1");
        }
        if (s.queueMaxWaiting() < 0) {
            throw refuse(s, "queue.max-waiting", "must be 0 (no queue) or more");
        }
        if (s.queueTimeout().isZero() || s.queueTimeout().isNegative()) {
            throw refuse(s, "queue.timeout", s.queueTimeout() + " must be above zero");
        }
        Duration max = leaseMax(s, caps);
        Duration initial = s.leaseDefault().orElse(min(deployment.defaultLease(), max));
        if (initial.isZero() || initial.isNegative() || initial.compareTo(max) > 0) {
            throw refuse(s, "lease-default", initial + " must be above zero and at most lease-max " + max);
        }
        for (Map.Entry<String, Integer> limit : Map.of("decode-attempts", s.decodeAttempts(), "breaker-failures",
                s.breakerFailures(), "max-outstanding-per-endpoint", s.maxOutstandingPerEndpoint(), "max-in-flight",
                s.maxInFlight()).entrySet()) {
            if (limit.getValue() < 1) {
                throw refuse(s, limit.getKey(), "must be at least 1");
            }
        }
        return caps;
    }

    /** Negotiates and creates the route's connector and pools. */
    public Route create(RouteSettings s, ConnectorContext context, Clock clock) {
        return create(s, context, clock, Set.of());
    }

    /** Negotiates and creates the route's connector and pools; the {@code discovered} pools may start empty. */
    public Route create(RouteSettings s, ConnectorContext context, Clock clock, Set<String> discovered) {
        ConnectorCapabilities caps = negotiate(s, discovered);
        EngineConnector connector = service(s).create(config(s), context);
        Duration max = leaseMax(s, caps);
        Duration initial = s.leaseDefault().orElse(min(deployment.defaultLease(), max));
        EndpointPool prefill = new EndpointPool(s.name() + "/prefill", s.prefill(), clock, s.breakerFailures(),
                s.breakerOpenFor(), s.maxOutstandingPerEndpoint(), endpoint -> connector.probe(endpoint)
                        .map(status -> EndpointVerdict.judge(s, EngineRole.ENGINE_ROLE_PREFILL, status)), probes,
                s.prefillPolicy().create(s.prefixLoadBound()), s.prefix());
        EndpointPool decode = new EndpointPool(s.name() + "/decode", s.decode(), clock, s.breakerFailures(),
                s.breakerOpenFor(), s.maxOutstandingPerEndpoint(), endpoint -> connector.probe(endpoint)
                        .map(status -> EndpointVerdict.judge(s, EngineRole.ENGINE_ROLE_DECODE, status)), probes,
                s.decodePolicy().create(s.prefixLoadBound()), s.prefix());
        return new Route(s, caps, connector, prefill, decode, initial, max, new AtomicInteger(),
                new DecodeCacheEstimate(s.bypass().decodeCacheTokens(), s.prefix().blockTokens()));
    }

    /**
     * Negotiates and creates a route that replaces {@code previous} (of the same name) at a reload: a new connector
     * and pools, whose endpoints that {@code previous} has too keep their state ({@link EndpointPool#carryOver}).
     */
    public Route replace(Route previous, RouteSettings s, ConnectorContext context, Clock clock,
            Set<String> discovered) {
        Route route = create(s, context, clock, discovered);
        if (previous.family().equals(s.family())) {
            route.prefill().carryOver(previous.prefill());
            route.decode().carryOver(previous.decode());
        }
        return route;
    }

    /**
     * Checks an endpoint that is to join a serving route's pool as negotiation checks the configured ones: a name
     * as configuration allows, an absolute URI, and the connector accepting the route with the
     * endpoint among its pool's current ones ({@link ConnectorService#initialise}, which does no I/O). A refusal is
     * an {@link IllegalArgumentException} naming the reason; nothing changes.
     */
    public void checkJoining(Route route, EngineRole role, Endpoint candidate) {
        RouteSettings s = route.settings();
        String pool = role == EngineRole.ENGINE_ROLE_PREFILL ? "prefill" : "decode";
        // the refusals below name the endpoint, never its address: the caller sent it, the answer need not echo it
        if (!ENDPOINT_NAME.matcher(candidate.name()).matches()) {
            throw refuse(s, pool, "endpoint name '" + candidate.name() + "' must be letters, digits, '.', '_' or '-'");
        }
        URI uri = candidate.uri();
        if (!uri.isAbsolute() || uri.getHost() == null || uri.getPort() == 0) {
            throw refuse(s, pool, "endpoint " + candidate.name() + " needs an absolute URL with a scheme and a host");
        }
        boolean toPrefill = role == EngineRole.ENGINE_ROLE_PREFILL;
        List<Endpoint> prefill = current(route.prefill(), toPrefill ? List.of() : s.prefill());
        List<Endpoint> decode = current(route.decode(), toPrefill ? s.decode() : List.of());
        (role == EngineRole.ENGINE_ROLE_PREFILL ? prefill : decode).add(candidate);
        service(s).initialise(new ConnectorConfig(s.name(), s.engineModel(), prefill, decode, s.options()));
    }

    /**
     * The pool's active endpoints, or {@code whenEmpty} while it has none: the other pool of the route may have been
     * retired whole, and the connector still checks a route that has both.
     */
    private static List<Endpoint> current(EndpointPool pool, List<Endpoint> whenEmpty) {
        List<Endpoint> out = new ArrayList<>();
        pool.members().forEach(m -> out.add(m.endpoint()));
        if (out.isEmpty()) {
            out.addAll(whenEmpty);
        }
        return out;
    }

    /**
     * A session must not outlive the KV it stands for: a READY session whose engine already freed the blocks would
     * send a decode to nothing. So the lease may not exceed how long the engine holds parked KV.
     */
    private Duration leaseMax(RouteSettings s, ConnectorCapabilities caps) {
        Duration ceiling = min(deployment.maxLease(), caps.engineHold());
        if (s.leaseMax().isEmpty()) {
            return ceiling;
        }
        Duration asked = s.leaseMax().get();
        if (asked.compareTo(caps.engineHold()) > 0) {
            throw refuse(s, "lease-max", asked + " is longer than " + s.family() + " holds parked KV ("
                    + caps.engineHold() + " with these options)");
        }
        if (asked.compareTo(deployment.maxLease()) > 0) {
            throw refuse(s, "lease-max", asked + " is above handoff.session.max-lease " + deployment.maxLease());
        }
        return asked;
    }

    private ConnectorService service(RouteSettings s) {
        ConnectorService service = families.get(s.family());
        if (service == null) {
            throw refuse(s, "family", "'" + s.family() + "' has no connector on the class path (known: "
                    + String.join(", ", new TreeSet<>(families.keySet())) + ")");
        }
        return service;
    }

    static ConnectorConfig config(RouteSettings s) {
        return new ConnectorConfig(s.name(), s.engineModel(), s.prefill(), s.decode(), s.options());
    }

    private static IllegalArgumentException refuse(RouteSettings s, String setting, String why) {
        return new IllegalArgumentException("route " + s.name() + ": " + setting + ": " + why);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static String names(Set<ScheduleStyle> styles) {
        return styles.stream().map(ScheduleStyle::configName).sorted().collect(Collectors.joining(", ", "[", "]"));
    }
}
