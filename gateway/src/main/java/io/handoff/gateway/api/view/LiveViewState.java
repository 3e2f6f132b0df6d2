package io.handoff.gateway.api.view;

import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.api.admin.AdminRoutes;
import io.handoff.gateway.control.Drain;
import io.handoff.gateway.control.FleetSampler;
import io.handoff.gateway.orchestration.RecentHandoffs;
import io.handoff.gateway.orchestration.RecentHandoffs.EndedHandoff;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.ReplicaIdentity;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.tenancy.ApiKeys;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Assembles the live view's JSON document: the routes with each endpoint's breaker and last sampled health, the
 * sessions by state and the drain (as {@code GET /admin/drain} counts them), the live sessions whose leases run out
 * soonest, the ended sessions whose KV engines still hold, soonest released first, and this replica's last handoffs.
 * Every list is bounded: the store is asked for at most {@value #SESSIONS_SHOWN} of each, never for all it holds.
 * Times are absolute instants plus what remains of them at {@code now}, so the page counts down on its own clock.
 */
@ApplicationScoped
public class LiveViewState {

    /** Most live sessions and most engine-held ones the view lists. */
    static final int SESSIONS_SHOWN = 20;
    /** Most ended handoffs the view lists. */
    static final int HANDOFFS_SHOWN = 50;

    private final RouteRegistry routes;
    private final FleetSampler samples;
    private final Drain drain;
    private final SessionStore store;
    private final RecentHandoffs recent;
    private final ApiKeys keys;
    private final ReplicaIdentity replica;
    private final Clock clock;

    public LiveViewState(RouteRegistry routes, FleetSampler samples, Drain drain, SessionStore store,
            RecentHandoffs recent, ApiKeys keys, ReplicaIdentity replica, Clock clock) {
        this.routes = routes;
        this.samples = samples;
        this.drain = drain;
        this.store = store;
        this.recent = recent;
        this.keys = keys;
        this.replica = replica;
        this.clock = clock;
    }

    /** The document as it stands now; fails when the store does not answer. */
    public Uni<JsonObject> now() {
        Instant now = clock.instant();
        return Uni.combine().all().unis(drain.progress(), store.soonestLeases(keys.tenants(), now, SESSIONS_SHOWN),
                store.soonestReleases(now, SESSIONS_SHOWN)).asTuple()
                .map(t -> new JsonObject()
                        .put("now", now.toString())
                        .put("replica", replica.id())
                        .put("routes", routes())
                        .put("drain", AdminRoutes.json(t.getItem1()))
                        .put("leases", leases(t.getItem2(), now))
                        .put("engine_held", held(t.getItem3(), now))
                        .put("handoffs", handoffs()));
    }

    private JsonArray routes() {
        JsonArray out = new JsonArray();
        for (Route route : routes.all()) {
            out.add(new JsonObject()
                    .put("name", route.name())
                    .put("family", route.family())
                    .put("model", route.settings().model())
                    .put("styles", new JsonArray(route.settings().styles().stream().map(ScheduleStyle::configName)
                            .sorted().toList()))
                    .put("default_style", route.settings().defaultStyle().configName())
                    .put("in_flight", route.inFlight().get())
                    .put("lease", route.leaseDefault().toString())
                    .put("pools", new JsonArray()
                            .add(pool(route, "prefill", route.prefill()))
                            .add(pool(route, "decode", route.decode()))));
        }
        return out;
    }

    private JsonObject pool(Route route, String role, EndpointPool pool) {
        JsonArray endpoints = new JsonArray();
        for (PooledEndpoint member : pool.members()) {
            JsonObject endpoint = new JsonObject()
                    .put("name", member.endpoint().name())
                    .put("breaker", member.breaker().state().name())
                    .put("outstanding", member.outstanding())
                    .put("last_failure", member.breaker().lastFailure());
            Optional<FleetSampler.EndpointSample> sample = samples.sample(route.name(), role,
                    member.endpoint().name());
            sample.ifPresent(s -> endpoint
                    .put("health", s.status().healthy() ? "healthy" : "unhealthy")
                    .put("detail", s.status().detail())
                    .put("sampled_at", s.sampledAt().toString())
                    .put("load", new JsonObject(new TreeMap<String, Object>(s.status().load()))));
            if (sample.isEmpty()) {
                endpoint.put("health", "not sampled");
            }
            endpoints.add(endpoint);
        }
        return new JsonObject().put("role", role).put("name", pool.name()).put("endpoints", endpoints);
    }

    private static JsonArray leases(List<Session> sessions, Instant now) {
        JsonArray out = new JsonArray();
        for (Session s : sessions) {
            out.add(session(s).put("lease_expires_at", s.leaseExpiresAt().toString())
                    .put("lease_ms_left", Math.max(0, Duration.between(now, s.leaseExpiresAt()).toMillis()))
                    .put("renewals", s.renewals()));
        }
        return out;
    }

    private static JsonArray held(List<Session> sessions, Instant now) {
        JsonArray out = new JsonArray();
        for (Session s : sessions) {
            JsonArray holds = new JsonArray();
            Instant latest = null;
            boolean endKnown = true;
            for (CleanupObligation o : s.obligations()) {
                if (!o.mayStillHold(now)) {
                    continue;
                }
                holds.add(new JsonObject().put("endpoint", o.endpoint()).put("resource", o.resource())
                        .put("status", o.status().name())
                        .put("held_until", o.heldUntil() == null ? null : o.heldUntil().toString()));
                // a hold waiting for its discharge, or without a timer, has no known end
                if (o.isPending() || o.heldUntil() == null) {
                    endKnown = false;
                } else if (latest == null || o.heldUntil().isAfter(latest)) {
                    latest = o.heldUntil();
                }
            }
            JsonObject entry = session(s).put("ended_at", s.terminalAt() == null ? null : s.terminalAt().toString())
                    .put("holds", holds);
            if (endKnown && latest != null) {
                entry.put("released_by", latest.toString())
                        .put("release_ms_left", Math.max(0, Duration.between(now, latest).toMillis()));
            } else {
                entry.putNull("released_by");
            }
            out.add(entry);
        }
        return out;
    }

    private static JsonObject session(Session s) {
        return new JsonObject()
                .put("session_id", s.id())
                .put("request_id", s.requestId())
                .put("tenant", s.tenant())
                .put("route", s.route())
                .put("model", s.model())
                .put("style", s.style().configName())
                .put("state", s.state().name());
    }

    private JsonArray handoffs() {
        JsonArray out = new JsonArray();
        for (EndedHandoff h : recent.newestFirst(HANDOFFS_SHOWN)) {
            out.add(new JsonObject()
                    .put("request_id", h.requestId())
                    .put("route", h.route())
                    .put("style", h.style())
                    .put("prefill", h.prefill())
                    .put("decode", h.decode())
                    .put("session_id", h.sessionId())
                    .put("state", h.state().name())
                    .put("ended_at", h.endedAt().toString())
                    .put("duration_ms", h.durationNanos() / 1_000_000.0)
                    .put("trace_id", h.traceId()));
        }
        return out;
    }
}
