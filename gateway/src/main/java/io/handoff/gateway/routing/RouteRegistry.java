package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.gateway.reaper.ReaperConfig;
import io.handoff.gateway.session.SessionPolicy;
import io.quarkus.runtime.Startup;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.inject.Instance;
import org.jboss.logging.Logger;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The routes this replica serves: a {@link RouteTable} built at start (generation 1) and swapped whole by each
 * {@link #reload}. Connector families are found with {@link ServiceLoader}, so a new engine family is a jar on the
 * class path, never a change here. A route that cannot be honoured stops the start with its reason; with no route
 * configured the embedded demo fleet is started instead (when enabled).
 *
 * <p>A reload is negotiated as the start is, every route of it ({@link ConnectorService#initialise}); one refusal
 * refuses it whole and the table serving stays. A route whose settings did not change stays the very same object
 * (its connector, pools, breakers, bulkhead and queue); a changed one is a new route whose endpoints that the old
 * one had too keep their state ({@link RouteFactory#replace}). Routes taken out are retired ({@link RetiredRoutes}):
 * requests finish on the route they started on, and cleanup still reaches their engines. Retired routes, and retired
 * endpoints of the serving routes ({@link RetiredEndpoints}), are let go on one periodic look once they owe nothing.
 */
@Startup
@ApplicationScoped
public class RouteRegistry {

    private static final Logger LOG = Logger.getLogger(RouteRegistry.class);

    /**
     * How often retired routes and retired endpoints are looked at, to let go of those that owe nothing any more (on
     * the clock).
     */
    private static final long LET_GO_PERIOD_MS = 30_000;

    private final RouteFactory factory;
    private final ConnectorContext context;
    private final Clock clock;
    private final Vertx vertx;
    private final Event<RoutesSwapped> swapped;
    private final Event<EndpointLetGo> endpointLetGo;
    private final RouteReloadMetrics metrics;
    /** By route, what each pool's discovery watched at start: discovery is set up then, a reload cannot change it. */
    private final Map<String, Map<String, String>> discoveryAtStart = new HashMap<>();
    private final RetiredRoutes retired = new RetiredRoutes();
    private final RetiredEndpoints retiredEndpoints;
    private volatile RouteTable table;
    private volatile long letGoTimer = -1;

    public RouteRegistry(RoutingConfig config, SessionPolicy policy, Vertx vertx, Clock clock,
            Instance<FallbackRoutes> fallback, Event<RoutesSwapped> swapped, Event<EndpointLetGo> endpointLetGo,
            RouteReloadMetrics metrics, ReaperConfig reaper, ProbeConfig probes) {
        this.factory = new RouteFactory(discoverFamilies(), policy, new ProbeGuard(probes));
        this.retiredEndpoints = new RetiredEndpoints(config.retiredEndpointKeep(), reaper);
        this.context = ConnectorContext.of(vertx, clock);
        this.clock = clock;
        this.vertx = vertx;
        this.swapped = swapped;
        this.endpointLetGo = endpointLetGo;
        this.metrics = metrics;
        List<RoutesText.Parsed> settings = new ArrayList<>();
        config.routes().forEach((name, route) -> {
            settings.add(new RoutesText.Parsed(RouteSettings.from(name, route), discoveryOf(name, route)));
            discoveryAtStart.put(name, discoveryOf(name, route));
        });
        if (settings.isEmpty() && config.demo().enabled() && fallback.isResolvable()) {
            fallback.get().routes().forEach(s -> settings.add(new RoutesText.Parsed(s, Map.of())));
        }
        List<Route> routes = new ArrayList<>();
        try {
            for (RoutesText.Parsed p : settings) {
                Route route = factory.create(p.settings(), context, clock, p.discovered());
                routes.add(route);
                logRoute(route);
            }
            table = new RouteTable(1, routes);
        } catch (RuntimeException e) {
            closeAll(routes);
            throw e;
        }
        metrics.tables(() -> table.generation(), retired::size);
        letGoTimer = vertx.setPeriodic(LET_GO_PERIOD_MS, id -> letGo());
    }

    /**
     * By pool ({@code prefill}, {@code decode}), what a route's discovery watches; absent: nothing.
     *
     * @throws IllegalArgumentException a pool's discovery names a source there is not
     */
    static Map<String, String> discoveryOf(String name, RoutingConfig.RouteConfig route) {
        Map<String, String> pools = new LinkedHashMap<>();
        describe(name, "prefill", route.prefillDiscovery()).ifPresent(d -> pools.put("prefill", d));
        describe(name, "decode", route.decodeDiscovery()).ifPresent(d -> pools.put("decode", d));
        return pools;
    }

    private static Optional<String> describe(String route, String pool, RoutingConfig.PoolDiscovery discovery) {
        return discovery.kubernetes().map(k -> "kubernetes source="
                + KubernetesSource.of(route, pool, k.source()).label() + " namespace=" + k.namespace().orElse("")
                + " label-selector="
                + k.labelSelector() + " port-name=" + k.portName().orElse("") + " port="
                + (k.port().isPresent() ? k.port().getAsInt() : "") + " scheme=" + k.scheme());
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

    /** The table serving now. */
    public RouteTable table() {
        return table;
    }

    /** The route serving a model name or alias. */
    public Optional<Route> forModel(String model) {
        return table.forModel(model);
    }

    public Optional<Route> named(String name) {
        return table.named(name);
    }

    public Collection<Route> all() {
        return table.all();
    }

    /**
     * The route through which KV held on an endpoint of a route of that name is discharged: the serving route when it
     * has the endpoint (active or retired in its pool), else the newest retired route of that name that has it. One
     * endpoint name means one engine within a route's name across reloads ({@link #reload} keeps it so), so either
     * reaches the engine that holds the KV.
     */
    public Optional<Route> forCleanup(String routeName, String endpointName) {
        Optional<Route> serving = table.named(routeName).filter(r -> r.prefill().member(endpointName).isPresent()
                || r.decode().member(endpointName).isPresent());
        if (serving.isPresent()) {
            return serving;
        }
        synchronized (this) {
            return retired.withEndpoint(routeName, endpointName);
        }
    }

    /** Routes a reload took out and still kept for what runs on them and what they owe, newest first. */
    public synchronized List<Route> retired() {
        return retired.all();
    }

    /** The negotiation the routes passed, for endpoints that join them later. */
    RouteFactory factory() {
        return factory;
    }

    /**
     * Reloads the routes from a properties text of {@code handoff.routes.<name>.*} keys, as read at start
     * ({@link RoutesText}). Never throws: a refusal is an answer, logged and counted.
     *
     * @param source who asked, for the metric and the log: {@code admin} or {@code file}
     */
    public RouteReload reload(String text, String source) {
        List<RoutesText.Parsed> parsed;
        try {
            parsed = RoutesText.parse(text);
        } catch (IllegalArgumentException e) {
            return refused(source, table.generation(), e.getMessage());
        }
        return reload(parsed, source);
    }

    /** Reloads the routes from their settings: the same as {@link #reload(String, String)} after parsing. */
    public synchronized RouteReload reload(List<RoutesText.Parsed> routes, String source) {
        RouteTable old = table;
        List<Route> created = new ArrayList<>();
        List<Route> next = new ArrayList<>();
        List<String> added = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        RouteTable fresh;
        try {
            for (RoutesText.Parsed p : routes) {
                RouteSettings s = p.settings();
                sameDiscovery(s.name(), p.discovery());
                oneNameOneEngine(s);
                Optional<Route> current = old.named(s.name());
                if (current.isPresent() && current.get().settings().equals(s)) {
                    factory.negotiate(s, p.discovered());
                    next.add(current.get());
                    continue;
                }
                Route route = current.isPresent()
                        ? factory.replace(current.get(), s, context, clock, p.discovered())
                        : factory.create(s, context, clock, p.discovered());
                created.add(route);
                next.add(route);
                (current.isPresent() ? changed : added).add(s.name());
            }
            fresh = new RouteTable(old.generation() + 1, next);
        } catch (RuntimeException e) {
            closeAll(created);
            return refused(source, old.generation(), String.valueOf(e.getMessage()));
        }
        List<Route> out = old.all().stream().filter(r -> next.stream().noneMatch(n -> n == r)).toList();
        if (created.isEmpty() && out.isEmpty()) {
            metrics.reloaded(source, RouteReload.Outcome.UNCHANGED);
            LOG.infof("routes reload (%s): every route as it was, generation %d stays", source, old.generation());
            return new RouteReload(RouteReload.Outcome.UNCHANGED, old.generation(), "", List.of(), List.of(),
                    List.of());
        }
        table = fresh;
        out.forEach(retired::add);
        List<String> removed = out.stream().map(Route::name).filter(n -> fresh.named(n).isEmpty()).toList();
        created.forEach(RouteRegistry::logRoute);
        metrics.reloaded(source, RouteReload.Outcome.APPLIED);
        LOG.infof("routes reload (%s): generation %d serves; added %s, changed %s, removed %s (%d retired routes "
                + "finish what runs on them)", source, fresh.generation(), added, changed, removed, out.size());
        try {
            swapped.fire(new RoutesSwapped(old, fresh));
        } catch (RuntimeException e) {
            LOG.errorf(e, "a follower of the route table failed after generation %d was swapped in",
                    fresh.generation());
        }
        letGo();
        return new RouteReload(RouteReload.Outcome.APPLIED, fresh.generation(), "", added, changed, removed);
    }

    private RouteReload refused(String source, long generation, String reason) {
        metrics.reloaded(source, RouteReload.Outcome.REFUSED);
        LOG.errorf("routes reload (%s) refused, generation %d keeps serving: %s", source, generation, reason);
        return RouteReload.refused(generation, reason);
    }

    /** Discovery is set up when the gateway starts: a reload keeps what each pool watches, or is refused. */
    private void sameDiscovery(String route, Map<String, String> discovery) {
        Map<String, String> atStart = discoveryAtStart.getOrDefault(route, Map.of());
        if (!atStart.equals(discovery)) {
            throw new IllegalArgumentException("route " + route + ": prefill-discovery and decode-discovery: "
                    + "discovery is set up when the gateway starts; a reload must keep it as it was (restart to "
                    + "change it)");
        }
    }

    /**
     * Cleanup obligations name their engine by route and endpoint name, and may still be owed on a retired route: so
     * a reload may not give an endpoint name of a route another address than the serving route or a retired one of
     * that name gives it.
     */
    private void oneNameOneEngine(RouteSettings s) {
        Map<String, URI> known = new HashMap<>();
        List<Route> sameName = new ArrayList<>(retired.named(s.name()));
        table.named(s.name()).ifPresent(sameName::add);
        for (Route r : sameName) {
            for (EndpointPool pool : List.of(r.prefill(), r.decode())) {
                EndpointPool.Membership m = pool.membership();
                Stream.concat(m.active().stream(), m.retired().stream())
                        .forEach(e -> known.putIfAbsent(e.endpoint().name(), e.endpoint().uri()));
            }
        }
        for (Endpoint e : Stream.concat(s.prefill().stream(), s.decode().stream()).toList()) {
            URI before = known.get(e.name());
            if (before != null && !before.equals(e.uri())) {
                throw new IllegalArgumentException("route " + s.name() + ": endpoint name '" + e.name() + "' already "
                        + "names another engine of this route, whose KV may still be owed cleanup; give the new "
                        + "engine another name");
            }
        }
    }

    /**
     * Lets go of what owes nothing any more: retired routes (their connectors closed) and retired endpoints of the
     * serving routes (their names given up). The endpoints are found first, then each is let go after checking again,
     * under the lock membership changes take ({@link PoolMembership}), so that none is taken back in between.
     */
    public void letGo() {
        Instant now = clock.instant();
        List<Route> gone;
        List<RetiredEndpoints.Due> pruned = new ArrayList<>();
        synchronized (this) {
            gone = retired.letGo(now);
            for (RetiredEndpoints.Due due : retiredEndpoints.find(table.all(), now)) {
                if (retiredEndpoints.prune(due, now)) {
                    pruned.add(due);
                }
            }
        }
        for (Route route : gone) {
            LOG.infof("route %s of an earlier table: nothing runs on it and its engines' KV hold has passed; let go",
                    route.name());
        }
        closeAll(gone);
        for (RetiredEndpoints.Due due : pruned) {
            PooledEndpoint m = due.member();
            LOG.infof("route %s: %s endpoint %s (%s) let go: retired at %s, no leg on it since %s, kept %s since "
                    + "then, so nothing owed on it can still be due", due.route().name(), due.pool(),
                    m.endpoint().name(), m.source().label(), m.retiredAt().map(Instant::toString).orElse("?"),
                    m.quietSince().map(Instant::toString).orElse("?"), retiredEndpoints.keepFor(due.route()));
            metrics.endpointPruned(due.route().name(), due.pool());
            try {
                endpointLetGo.fire(new EndpointLetGo(due.route(), due.pool(), m.endpoint().name()));
            } catch (RuntimeException e) {
                LOG.errorf(e, "a follower of route %s's pools failed after endpoint %s was let go", due.route().name(),
                        m.endpoint().name());
            }
        }
    }

    /** How long a retired endpoint of the route is kept after the last leg on it ended ({@link RetiredEndpoints}). */
    public Duration retiredEndpointKeep(Route route) {
        return retiredEndpoints.keepFor(route);
    }

    /** When a retired endpoint of a serving route may be let go; empty while legs run on it, or while active. */
    public Optional<Instant> prunableAt(Route route, PooledEndpoint member) {
        return retiredEndpoints.prunableAt(route, member);
    }

    private static void logRoute(Route route) {
        RouteSettings s = route.settings();
        LOG.infof("route %s: model %s on %s, styles %s (default %s), bypass %s, lease %s (max %s)",
                s.name(), s.modelNames(), s.family(), s.styles(), s.defaultStyle().configName(),
                s.bypass().never() ? "never" : s.bypass().triggers(), route.leaseDefault(), route.leaseMax());
    }

    @PreDestroy
    void close() {
        if (letGoTimer >= 0) {
            vertx.cancelTimer(letGoTimer);
        }
        closeAll(table.all());
        closeAll(retired());
    }

    private static void closeAll(Collection<Route> routes) {
        for (Route route : routes) {
            try {
                route.connector().close();
            } catch (RuntimeException e) {
                LOG.warnf(e, "closing the connector of route %s", route.name());
            }
        }
    }
}
