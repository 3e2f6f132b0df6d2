package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.openengine.v1.EngineRole;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Adds endpoints to the pools of serving routes and retires them, for the admin API (and discovery). An endpoint
 * joins only after the checks negotiation gives configured ones ({@link RouteFactory#checkJoining}); it then gets
 * its own breaker like them, and its connector client is made on its first call, as for configured ones. Changes of
 * one route are serialised, so that two calls cannot give one name to two engines, and with reloads of the routes
 * ({@link RouteRegistry#reload}), so that a change never lands on a route a reload has just replaced (a reload
 * carries an endpoint added by hand over to the route that replaces its route). Membership is this replica's:
 * another replica learns of a change only through its own admin API or discovery. A retired endpoint is let go by the
 * registry's periodic look once nothing owed on it can be due ({@link RetiredEndpoints}), under the same lock; its name
 * may then join again, at any address.
 */
@ApplicationScoped
public class PoolMembership {

    private static final Logger LOG = Logger.getLogger(PoolMembership.class);

    /** An endpoint as it is now in its pool. */
    public record Member(Route route, String pool, PooledEndpoint member, boolean active) {
    }

    private final RouteRegistry routes;

    public PoolMembership(RouteRegistry routes) {
        this.routes = routes;
    }

    /**
     * Adds an endpoint to a pool ({@code prefill} or {@code decode}) of a route.
     *
     * @throws MembershipRefusal NOT_FOUND for an unknown route or pool, INVALID for a name or URL that cannot be an
     *                           endpoint of the route, CONFLICT for a name the pool or route already uses
     */
    public Member add(String routeName, String pool, String endpointName, String url, EndpointSource source) {
        // under the registry's lock, as a reload is: a change never lands on a route a reload has just replaced
        synchronized (routes) {
            return addNow(routeName, pool, endpointName, url, source);
        }
    }

    private Member addNow(String routeName, String pool, String endpointName, String url, EndpointSource source) {
        Route route = route(routeName);
        EndpointPool members = pool(route, pool);
        if (endpointName == null || endpointName.isBlank()) {
            throw new MembershipRefusal(MembershipRefusal.Kind.INVALID, "an endpoint needs a name");
        }
        if (url == null || url.isBlank()) {
            throw new MembershipRefusal(MembershipRefusal.Kind.INVALID, "endpoint " + endpointName + " needs a url");
        }
        Endpoint endpoint;
        try {
            endpoint = new Endpoint(endpointName, new URI(url.trim()));
        } catch (URISyntaxException e) {
            throw new MembershipRefusal(MembershipRefusal.Kind.INVALID, "the url of endpoint " + endpointName
                    + " is not a URL");
        }
        synchronized (route) {
            if (members.members().stream().anyMatch(m -> m.endpoint().name().equals(endpointName))) {
                throw new MembershipRefusal(MembershipRefusal.Kind.CONFLICT, "pool " + members.name()
                        + " already has an endpoint named '" + endpointName + "'");
            }
            sameNameSameEngine(route, endpoint);
            try {
                routes.factory().checkJoining(route, role(pool), endpoint);
            } catch (IllegalArgumentException e) {
                throw new MembershipRefusal(MembershipRefusal.Kind.INVALID, e.getMessage());
            }
            PooledEndpoint member;
            try {
                member = members.add(endpoint, source);
            } catch (IllegalStateException | IllegalArgumentException e) {
                throw new MembershipRefusal(MembershipRefusal.Kind.CONFLICT, e.getMessage());
            }
            LOG.infof("route %s: %s endpoint %s joined (%s) at %s", route.name(), pool, endpointName, source.label(),
                    endpoint.uri());
            return new Member(route, pool, member, true);
        }
    }

    /**
     * Retires an active endpoint of a pool: it takes no new legs; its running legs finish as they would, and what it
     * holds stays resolvable for cleanup. The last endpoint of a pool may be retired: the pool is then empty.
     *
     * @throws MembershipRefusal NOT_FOUND for an unknown route, pool or active endpoint
     */
    public Member retire(String routeName, String pool, String endpointName) {
        synchronized (routes) {
            return retireNow(routeName, pool, endpointName);
        }
    }

    private Member retireNow(String routeName, String pool, String endpointName) {
        Route route = route(routeName);
        EndpointPool members = pool(route, pool);
        synchronized (route) {
            PooledEndpoint member = members.retire(endpointName).orElseThrow(() -> new MembershipRefusal(
                    MembershipRefusal.Kind.NOT_FOUND, "pool " + members.name() + " has no active endpoint named '"
                            + endpointName + "'"));
            if (members == route.decode()) {
                route.decodeCache().forget(endpointName);
            }
            LOG.infof("route %s: %s endpoint %s retired (%d legs still running on it); kept %s after its last leg "
                    + "for what may be owed on it", route.name(), pool, endpointName, member.outstanding(),
                    routes.retiredEndpointKeep(route));
            return new Member(route, pool, member, false);
        }
    }

    /**
     * One name means one engine across the route's pools, retired endpoints included: cleanup obligations name their
     * engine by endpoint name, so a name must not come to mean another engine while KV may be owed on the first.
     */
    private static void sameNameSameEngine(Route route, Endpoint endpoint) {
        for (EndpointPool p : List.of(route.prefill(), route.decode())) {
            EndpointPool.Membership m = p.membership();
            for (PooledEndpoint e : Stream.concat(m.active().stream(), m.retired().stream()).toList()) {
                if (e.endpoint().name().equals(endpoint.name()) && !e.endpoint().uri().equals(endpoint.uri())) {
                    throw new MembershipRefusal(MembershipRefusal.Kind.CONFLICT, "endpoint name '" + endpoint.name()
                            + "' already names another engine of route " + route.name() + " (in pool " + p.name()
                            + (m.active().contains(e) ? ")" : ", retired, whose KV may still be owed cleanup)"));
                }
            }
        }
    }

    /**
     * When a retired endpoint may be let go, as last noted ({@link RouteRegistry#prunableAt}); empty while legs run on
     * it, or for an active one.
     */
    public Optional<Instant> prunableAt(Route route, PooledEndpoint member) {
        return routes.prunableAt(route, member);
    }

    /** The route of that name. */
    public Route route(String routeName) {
        return routes.named(routeName).orElseThrow(() -> new MembershipRefusal(MembershipRefusal.Kind.NOT_FOUND,
                "no route named '" + routeName + "'"));
    }

    /** The pool of a route by its name in the admin API: {@code prefill} or {@code decode}. */
    public static EndpointPool pool(Route route, String pool) {
        return switch (pool) {
            case "prefill" -> route.prefill();
            case "decode" -> route.decode();
            default -> throw new MembershipRefusal(MembershipRefusal.Kind.NOT_FOUND, "a route's pools are prefill "
                    + "and decode, not '" + pool + "'");
        };
    }

    private static EngineRole role(String pool) {
        return pool.equals("prefill") ? EngineRole.ENGINE_ROLE_PREFILL : EngineRole.ENGINE_ROLE_DECODE;
    }
}
