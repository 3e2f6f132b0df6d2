package io.handoff.gateway.routing;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.HeldKv;
import io.handoff.gateway.reaper.CleanupPort;
import io.handoff.gateway.reaper.ReaperConfig;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Discharges an obligation through the connector of the route that recorded it (obligations name their route as
 * their connector), on the endpoint that holds the KV, whether it is still active in its pool or was retired from it
 * (a retired endpoint takes no new legs but is still owed its discharges), and whether its route still serves or a
 * reload retired it ({@link RouteRegistry#forCleanup}). An obligation whose route or endpoint this replica does not
 * know is retried and, after the reaper's attempts, abandoned to the engine's own timer.
 *
 * <p>The engine call itself runs under a {@link DischargeGuard}: a timeout, and a few immediate retries of a call
 * that failed, before the reaper's store-backed schedule takes over. Made at start, so that guard settings that
 * cannot work stop the start rather than the first cleanup.
 */
@Startup
@ApplicationScoped
public class RoutedCleanupPort implements CleanupPort {

    private final RouteRegistry routes;
    private final DischargeGuard guard;

    public RoutedCleanupPort(RouteRegistry routes, ReaperConfig config) {
        this.routes = routes;
        this.guard = new DischargeGuard(config);
    }

    @Override
    public Uni<DischargeResult> discharge(Session session, CleanupObligation obligation) {
        Route route = routes.forCleanup(obligation.connector(), obligation.endpoint()).orElse(null);
        if (route == null) {
            String why = routes.named(obligation.connector()).isPresent()
                    ? "route " + obligation.connector() + " has no endpoint named '" + obligation.endpoint() + "'"
                    : "no route named '" + obligation.connector() + "' is configured on this replica";
            return Uni.createFrom().item(DischargeResult.retry(why));
        }
        Endpoint endpoint = route.prefill().member(obligation.endpoint())
                .or(() -> route.decode().member(obligation.endpoint()))
                .map(PooledEndpoint::endpoint).orElseThrow();
        HeldKv held = new HeldKv(obligation.id(), endpoint, obligation.resource(), obligation.handle(),
                obligation.heldUntil(), true);
        return guard.discharge(() -> route.connector().discharge(held));
    }
}
