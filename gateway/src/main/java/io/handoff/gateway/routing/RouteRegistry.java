package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.gateway.session.SessionPolicy;
import io.quarkus.runtime.Startup;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * The routes this replica serves, built once at start. Connector families are found with {@link ServiceLoader}, so a
 * new engine family is a jar on the class path, never a change here. A route that cannot be honoured stops the
 * start with its reason; with no route configured the embedded demo fleet is started instead (when enabled).
 */
@Startup
@ApplicationScoped
public class RouteRegistry {

    private static final Logger LOG = Logger.getLogger(RouteRegistry.class);

    private final Map<String, Route> byName = new LinkedHashMap<>();
    private final Map<String, Route> byModel = new HashMap<>();
    private final RouteFactory factory;

    public RouteRegistry(RoutingConfig config, SessionPolicy policy, Vertx vertx, Clock clock,
            Instance<FallbackRoutes> fallback) {
        factory = new RouteFactory(discoverFamilies(), policy);
        List<RouteSettings> settings = new ArrayList<>();
        Map<String, Set<String>> discovered = new HashMap<>();
        config.routes().forEach((name, route) -> {
            settings.add(RouteSettings.from(name, route));
            discovered.put(name, discoveredPools(route));
        });
        if (settings.isEmpty() && config.demo().enabled() && fallback.isResolvable()) {
            settings.addAll(fallback.get().routes());
        }
        ConnectorContext context = ConnectorContext.of(vertx, clock);
        try {
            for (RouteSettings s : settings) {
                Route route = factory.create(s, context, clock, discovered.getOrDefault(s.name(), Set.of()));
                add(route);
                LOG.infof("route %s: model %s on %s, styles %s (default %s), bypass %s, lease %s (max %s)",
                        s.name(), s.modelNames(), s.family(), s.styles(), s.defaultStyle().configName(),
                        s.bypass().never() ? "never" : s.bypass().triggers(), route.leaseDefault(), route.leaseMax());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The pools of a route that take endpoints while the gateway runs, so that they may start with none. */
    private static Set<String> discoveredPools(RoutingConfig.RouteConfig route) {
        Set<String> pools = new HashSet<>();
        if (route.prefillDiscovery().any()) {
            pools.add("prefill");
        }
        if (route.decodeDiscovery().any()) {
            pools.add("decode");
        }
        return pools;
    }

    /** Every {@link ConnectorService} on the class path, by family name. */
    public static Map<String, ConnectorService> discoverFamilies() {
        Map<String, ConnectorService> families = new HashMap<>();
        for (ConnectorService service : ServiceLoader.load(ConnectorService.class,
                RouteRegistry.class.getClassLoader())) {
            ConnectorService previous = families.put(service.family(), service);
            if (previous != null) {
                throw new IllegalStateException("two connectors claim family " + service.family() + ": "
                        + previous.getClass().getName() + " and " + service.getClass().getName());
            }
        }
        return families;
    }

    private void add(Route route) {
        if (byName.put(route.name(), route) != null) {
            throw new IllegalArgumentException("route " + route.name() + " is defined twice");
        }
        for (String model : route.settings().modelNames()) {
            Route other = byModel.put(model, route);
            if (other != null) {
                throw new IllegalArgumentException("route " + route.name() + ": model name '" + model
                        + "' is already served by route " + other.name());
            }
        }
    }

    /** The route serving a model name or alias. */
    public Optional<Route> forModel(String model) {
        return Optional.ofNullable(byModel.get(model));
    }

    public Optional<Route> named(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The negotiation the routes passed at start, for endpoints that join them later. */
    RouteFactory factory() {
        return factory;
    }

    public Collection<Route> all() {
        return byName.values();
    }

    @PreDestroy
    void close() {
        for (Route route : byName.values()) {
            try {
                route.connector().close();
            } catch (RuntimeException e) {
                LOG.warnf(e, "closing the connector of route %s", route.name());
            }
        }
    }
}
