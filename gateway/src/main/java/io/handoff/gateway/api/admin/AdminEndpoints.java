package io.handoff.gateway.api.admin;

import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.EndpointSource;
import io.handoff.gateway.routing.MembershipRefusal;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.runtime.ClientText;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The pools of a route over HTTP, for fleets without Kubernetes: what each pool has now and why, and endpoints added
 * and retired by hand. Admin key only ({@link AdminKeyCheck}). A change is this replica's alone: an operator makes it
 * on every replica. Refusals change nothing and name no address.
 *
 * <ul>
 * <li>{@code GET /admin/routes/{route}/endpoints}: every endpoint of both pools, active and retired, with where it
 * came from, its breaker, legs running on it and its last sample;</li>
 * <li>{@code POST /admin/routes/{route}/pools/{prefill|decode}/endpoints} with {@code {"name": ..., "url": ...}}:
 * adds one (201), checked as configured ones are at start and sampled at once (the answer carries the sample);
 * 400 for input that cannot be an endpoint of the route, 404 for an unknown route or pool, 409 for a name in use;</li>
 * <li>{@code DELETE /admin/routes/{route}/pools/{prefill|decode}/endpoints/{name}}: retires one (200): it takes no
 * new legs, running ones finish, and KV it holds is still discharged there. The last one may go: the pool is then
 * empty and its route refuses as unavailable until one is added. 404 for no such active endpoint. A retired one is
 * listed with when it retired and when it may be let go, which the routing room does once nothing owed on it can be
 * due; it is then no longer listed, and its name may be added again.</li>
 * </ul>
 */
@ApplicationScoped
public class AdminEndpoints {

    /** An endpoint is a name and a URL: a body longer than this is not one. */
    private static final int MAX_BODY_BYTES = 8 * 1024;

    private final AdminKeyCheck check;
    private final PoolMembership membership;
    private final FleetSampler sampler;

    public AdminEndpoints(AdminKeyCheck check, PoolMembership membership, FleetSampler sampler) {
        this.check = check;
        this.membership = membership;
        this.sampler = sampler;
    }

    void routes(@Observes Router router) {
        router.get("/admin/routes/:route/endpoints").handler(this::list);
        router.post("/admin/routes/:route/pools/:pool/endpoints")
                .handler(BodyHandler.create().setBodyLimit(MAX_BODY_BYTES)).handler(this::add);
        router.delete("/admin/routes/:route/pools/:pool/endpoints/:name").handler(this::retire);
    }

    private void list(RoutingContext rc) {
        if (!check.admits(rc)) {
            return;
        }
        try {
            Route route = membership.route(rc.pathParam("route"));
            JsonObject pools = new JsonObject();
            for (String pool : List.of("prefill", "decode")) {
                EndpointPool.Membership now = PoolMembership.pool(route, pool).membership();
                JsonArray endpoints = new JsonArray();
                now.active().forEach(m -> endpoints.add(json(route, pool, m, true)));
                now.retired().forEach(m -> endpoints.add(json(route, pool, m, false)));
                pools.put(pool, endpoints);
            }
            answer(rc, 200, new JsonObject().put("route", route.name()).put("pools", pools));
        } catch (MembershipRefusal refusal) {
            refuse(rc, refusal);
        }
    }

    private void add(RoutingContext rc) {
        if (!check.admits(rc)) {
            return;
        }
        JsonObject body;
        try {
            body = rc.body().asJsonObject();
        } catch (DecodeException | ClassCastException e) {
            AdminKeyCheck.error(rc, 400, "the body must be a JSON object {\"name\": ..., \"url\": ...}");
            return;
        }
        if (body == null || !(body.getValue("name") instanceof String name)
                || !(body.getValue("url") instanceof String url)) {
            AdminKeyCheck.error(rc, 400, "the body must be a JSON object with string fields name and url");
            return;
        }
        PoolMembership.Member added;
        try {
            added = membership.add(rc.pathParam("route"), rc.pathParam("pool"), name, url, EndpointSource.ADMIN);
        } catch (MembershipRefusal refusal) {
            refuse(rc, refusal);
            return;
        }
        EndpointPool pool = PoolMembership.pool(added.route(), added.pool());
        sampler.sample(added.route(), added.pool(), pool, added.member()).subscribe().with(
                sample -> answer(rc, 201, json(added.route(), added.pool(), added.member(), true)),
                failure -> answer(rc, 201, json(added.route(), added.pool(), added.member(), true)));
    }

    private void retire(RoutingContext rc) {
        if (!check.admits(rc)) {
            return;
        }
        try {
            PoolMembership.Member retired = membership.retire(rc.pathParam("route"), rc.pathParam("pool"),
                    rc.pathParam("name"));
            sampler.retired(retired.route(), retired.pool(), retired.member());
            answer(rc, 200, json(retired.route(), retired.pool(), retired.member(), false));
        } catch (MembershipRefusal refusal) {
            refuse(rc, refusal);
        }
    }

    /** One endpoint as the operator reads it; the URL is what the operator (or configuration) gave. */
    JsonObject json(Route route, String pool, PooledEndpoint m, boolean active) {
        JsonObject out = new JsonObject()
                .put("name", m.endpoint().name())
                .put("url", m.endpoint().uri().toString())
                .put("pool", pool)
                .put("source", m.source().label())
                .put("state", active ? "active" : "retired")
                .put("breaker", m.breaker().state().name().toLowerCase(Locale.ROOT))
                .put("outstanding", m.outstanding())
                .put("last_failure", m.breaker().lastFailure());
        Optional<FleetSampler.EndpointSample> sample = active ? sampler.sample(route.name(), pool,
                m.endpoint().name()) : Optional.empty();
        sample.ifPresentOrElse(s -> out
                .put("health", s.status().healthy() ? "healthy" : "unhealthy")
                .put("detail", s.status().detail())
                .put("sampled_at", s.sampledAt().toString()),
                () -> out.put("health", active ? "not sampled" : "retired"));
        if (!active) {
            // when it retired, and when it may be let go (absent while legs still run on it)
            m.retiredAt().ifPresent(at -> out.put("retired_at", at.toString()));
            membership.prunableAt(route, m).ifPresent(at -> out.put("prunable_at", at.toString()));
        }
        return out;
    }

    private static void refuse(RoutingContext rc, MembershipRefusal refusal) {
        int status = switch (refusal.kind()) {
            case NOT_FOUND -> 404;
            case INVALID -> 400;
            case CONFLICT -> 409;
        };
        AdminKeyCheck.error(rc, status, ClientText.withoutAddresses(refusal.getMessage()));
    }

    private static void answer(RoutingContext rc, int status, JsonObject body) {
        rc.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
    }
}
