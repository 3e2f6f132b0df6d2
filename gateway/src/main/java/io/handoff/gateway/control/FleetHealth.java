package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.orchestration.GenerateOrchestrator;
import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.HealthCheck;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.HealthState;
import io.handoff.openengine.v1.StoppingOptions;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/**
 * Control.Health for the fleet: one check for the session store, one per route, one per pool and one per endpoint,
 * rolled up into the state of the whole. Endpoint checks read the breakers (which the fleet sampler and traffic keep
 * up to date) and say why an endpoint is out, e.g. that it answers as the wrong role; only the store is asked live.
 *
 * <ul>
 * <li>endpoint: READY while its breaker admits traffic, NOT_READY otherwise;</li>
 * <li>pool: READY when every endpoint is, DEGRADED when some are, NOT_READY when none is;</li>
 * <li>route: the worse of its pools, except that a route that bypasses when its prefill pool is unavailable is
 * DEGRADED, not NOT_READY, while its decode pool serves;</li>
 * <li>whole: DRAINING while the deployment drains; NOT_READY when the store does not answer or no route can serve;
 * DEGRADED when some route or pool is not READY; READY otherwise.</li>
 * </ul>
 */
@ApplicationScoped
public class FleetHealth {

    /** The tenant the inference probe's sessions belong to: not a valid configured tenant name, so never a client's. */
    public static final String PROBE_TENANT = "_health-probe";

    private final RouteRegistry routes;
    private final SessionStore store;
    private final DrainState drain;
    private final GenerateOrchestrator orchestrator;
    private final DiscoveryConfig config;
    private final ControlMetrics metrics;
    private final FleetSampler sampler;

    public FleetHealth(RouteRegistry routes, SessionStore store, DrainState drain, GenerateOrchestrator orchestrator,
            DiscoveryConfig config, ControlMetrics metrics, FleetSampler sampler) {
        this.sampler = sampler;
        this.routes = routes;
        this.store = store;
        this.drain = drain;
        this.orchestrator = orchestrator;
        this.config = config;
        this.metrics = metrics;
    }

    public Uni<HealthResponse> health(HealthRequest request) {
        Collection<Route> scope;
        if (request.getModel().isEmpty()) {
            scope = routes.all();
        } else {
            scope = List.of(routes.forModel(request.getModel()).orElseThrow(() -> Status.NOT_FOUND
                    .withDescription("no route serves model '" + request.getModel() + "'").asRuntimeException()));
        }
        EngineRole role = request.getRole();
        Uni<HealthCheck> storeCheck = storeCheck();
        List<Uni<HealthCheck>> probes = new ArrayList<>();
        if (request.getIncludeInferenceProbe()) {
            for (Route route : scope) {
                probes.add(inferenceProbe(route));
            }
        }
        Uni<List<HealthCheck>> inference = probes.isEmpty() ? Uni.createFrom().item(List.of())
                : Uni.join().all(probes).andFailFast();
        return Uni.combine().all().unis(storeCheck, inference).asTuple().map(t -> {
            HealthResponse.Builder out = HealthResponse.newBuilder();
            out.addChecks(t.getItem1());
            List<HealthState> routeStates = new ArrayList<>();
            for (Route route : scope) {
                routeStates.add(routeChecks(route, role, out));
            }
            out.addAllChecks(t.getItem2());
            HealthState whole = whole(t.getItem1().getState(), routeStates, t.getItem2());
            metrics.healthAnswered(whole.name());
            return out.setState(whole).build();
        });
    }

    private HealthState whole(HealthState storeState, List<HealthState> routeStates, List<HealthCheck> inference) {
        if (drain.refusesNewWork()) {
            return HealthState.HEALTH_STATE_DRAINING;
        }
        if (storeState != HealthState.HEALTH_STATE_READY) {
            return HealthState.HEALTH_STATE_NOT_READY;
        }
        if (!routeStates.isEmpty() && routeStates.stream().allMatch(s -> s == HealthState.HEALTH_STATE_NOT_READY)) {
            return HealthState.HEALTH_STATE_NOT_READY;
        }
        boolean anyWorse = routeStates.stream().anyMatch(s -> s != HealthState.HEALTH_STATE_READY)
                || inference.stream().anyMatch(c -> c.getState() != HealthState.HEALTH_STATE_READY);
        return anyWorse ? HealthState.HEALTH_STATE_DEGRADED : HealthState.HEALTH_STATE_READY;
    }

    private Uni<HealthCheck> storeCheck() {
        String name = "session-store/" + store.kind();
        Duration timeout = config.storeTimeout();
        return store.ping().ifNoItem().after(timeout).fail()
                .map(ok -> check(name, HealthState.HEALTH_STATE_READY, store.kind() + " answers"))
                .onFailure().recoverWithItem(f -> check(name, HealthState.HEALTH_STATE_NOT_READY,
                        store.kind() + " does not answer: " + f.getMessage()
                                + "; sessions cannot be allocated, renewed or released until it does"));
    }

    /** Adds the route's pool and endpoint checks and the route's own; returns the route's state. */
    private HealthState routeChecks(Route route, EngineRole role, HealthResponse.Builder out) {
        HealthState prefill = null;
        HealthState decode = null;
        List<HealthCheck> details = new ArrayList<>();
        if (role != EngineRole.ENGINE_ROLE_DECODE) {
            prefill = poolCheck(route, "prefill", route.prefill(), details);
        }
        if (role != EngineRole.ENGINE_ROLE_PREFILL) {
            decode = poolCheck(route, "decode", route.decode(), details);
        }
        HealthState state;
        String message;
        if (prefill == null || decode == null) {
            state = prefill == null ? decode : prefill;
            message = "only the " + (prefill == null ? "decode" : "prefill") + " pool was asked for";
        } else if (decode == HealthState.HEALTH_STATE_NOT_READY) {
            state = HealthState.HEALTH_STATE_NOT_READY;
            message = "no decode endpoint takes traffic";
        } else if (prefill == HealthState.HEALTH_STATE_NOT_READY) {
            BypassPolicy bypass = route.settings().bypass();
            boolean bypasses = bypass.has(BypassPolicy.Trigger.PREFILL_UNAVAILABLE)
                    || bypass.has(BypassPolicy.Trigger.ALWAYS);
            state = bypasses ? HealthState.HEALTH_STATE_DEGRADED : HealthState.HEALTH_STATE_NOT_READY;
            message = bypasses ? "no prefill endpoint takes traffic: requests prefill locally on the decode pool"
                    : "no prefill endpoint takes traffic";
        } else if (prefill == HealthState.HEALTH_STATE_DEGRADED || decode == HealthState.HEALTH_STATE_DEGRADED) {
            state = HealthState.HEALTH_STATE_DEGRADED;
            message = "some endpoints are out";
        } else {
            state = HealthState.HEALTH_STATE_READY;
            message = "model " + route.settings().model() + " on " + route.family();
        }
        out.addChecks(check("route/" + route.name(), state, message));
        out.addAllChecks(details);
        return state;
    }

    private HealthState poolCheck(Route route, String pool, EndpointPool members, List<HealthCheck> details) {
        List<HealthCheck> endpoints = new ArrayList<>();
        int up = 0;
        for (PooledEndpoint m : members.members()) {
            // out when its breaker is open, or when its last probe failed even before the breaker's threshold
            var lastSample = sampler.sample(route.name(), pool, m.endpoint().name())
                    .map(FleetSampler.EndpointSample::status).filter(st -> !st.healthy());
            boolean admits = m.breaker().admits() && lastSample.isEmpty();
            if (admits) {
                up++;
            }
            String why = lastSample.map(st -> "its last probe failed: " + st.detail())
                    .orElse(m.breaker().lastFailure());
            endpoints.add(check("route/" + route.name() + "/" + pool + "/" + m.endpoint().name(),
                    admits ? HealthState.HEALTH_STATE_READY : HealthState.HEALTH_STATE_NOT_READY,
                    admits ? m.endpoint().name() + " takes traffic"
                            : m.endpoint().name() + " is out (" + m.breaker().state().name().toLowerCase() + "): "
                                    + (why.isEmpty() ? "no reason recorded" : why)));
        }
        int total = members.members().size();
        // a pool whose endpoints were all retired serves nothing: not ready, not "all of none ready"
        HealthState state = up == 0 ? HealthState.HEALTH_STATE_NOT_READY
                : up == total ? HealthState.HEALTH_STATE_READY : HealthState.HEALTH_STATE_DEGRADED;
        details.add(check("route/" + route.name() + "/" + pool, state, up + " of " + total + " endpoints take traffic"));
        details.addAll(endpoints);
        return state;
    }

    /** One minimal Generate through the route, as a client would send it: one token of a short prompt. */
    private Uni<HealthCheck> inferenceProbe(Route route) {
        String name = "inference/" + route.name();
        if (drain.refusesNewWork()) {
            return Uni.createFrom().item(check(name, HealthState.HEALTH_STATE_DRAINING,
                    "skipped: the deployment is draining and takes no Generate"));
        }
        Duration timeout = config.inferenceProbeTimeout();
        GenerateRequest probe = GenerateRequest.newBuilder()
                .setRequestId("health-probe-" + UUID.randomUUID())
                .setModel(route.settings().model())
                .setPrompt("Handoff health probe")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(1))
                .build();
        return orchestrator.generate(PROBE_TENANT, probe).collect().asList()
                .ifNoItem().after(timeout).failWith(() -> new IllegalStateException(
                        "no answer within " + timeout.toMillis() + " ms"))
                .map(events -> verdict(name, events))
                .onFailure().recoverWithItem(f -> check(name, HealthState.HEALTH_STATE_NOT_READY,
                        "the probe Generate was refused or failed: " + f.getMessage()));
    }

    private static HealthCheck verdict(String name, List<GenerateResponse> events) {
        for (GenerateResponse e : events) {
            if (e.hasError()) {
                return check(name, HealthState.HEALTH_STATE_NOT_READY, "the probe Generate ended with "
                        + e.getError().getCode() + ": " + e.getError().getMessage());
            }
        }
        boolean finished = events.stream().anyMatch(GenerateResponse::hasFinished);
        return finished ? check(name, HealthState.HEALTH_STATE_READY, "a one-token Generate went through the route")
                : check(name, HealthState.HEALTH_STATE_NOT_READY, "the probe Generate ended without finishing");
    }

    /** One check as a caller reads it: endpoints by name, and no address an engine or the store reported. */
    private static HealthCheck check(String name, HealthState state, String message) {
        return HealthCheck.newBuilder().setName(name).setState(state).setMessage(ClientText.withoutAddresses(message))
                .build();
    }
}
