package io.handoff.gateway.api.admin;

import io.handoff.gateway.control.Drain;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.tenancy.ApiKeys;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.function.Supplier;

/**
 * Admin operations over HTTP on the gateway's port, for operators (OpenEngine has no RPC for them). Every call
 * needs an admin key ({@code handoff.auth.admin-keys}) as {@code authorization: Bearer <key>} or
 * {@code x-api-key}: no key is 401, a tenant's key (or any other) is 403. With no admin key configured, admin
 * operations are unavailable.
 *
 * <ul>
 * <li>{@code POST /admin/drain}: starts draining the deployment (idempotent) and answers its progress;</li>
 * <li>{@code GET /admin/drain}: the progress: counts of sessions by state, live, still held by engines, Generates
 * running on this replica, and whether the drain is complete;</li>
 * <li>{@code DELETE /admin/drain}: stops the drain: new work is taken again.</li>
 * </ul>
 */
@ApplicationScoped
public class AdminRoutes {

    private final ApiKeys keys;
    private final Drain drain;

    public AdminRoutes(ApiKeys keys, Drain drain) {
        this.keys = keys;
        this.drain = drain;
    }

    void routes(@Observes Router router) {
        router.post("/admin/drain").handler(rc -> admin(rc, drain::begin));
        router.get("/admin/drain").handler(rc -> admin(rc, drain::progress));
        router.delete("/admin/drain").handler(rc -> admin(rc, drain::end));
    }

    private void admin(RoutingContext rc, Supplier<Uni<Drain.Progress>> action) {
        String key = presentedKey(rc);
        if (key == null || key.isEmpty()) {
            error(rc, 401, "an admin key is required (authorization: Bearer <key>)");
            return;
        }
        if (!keys.isAdminKey(key)) {
            error(rc, 403, "admin operations need a key from handoff.auth.admin-keys; tenant keys cannot call them");
            return;
        }
        action.get().subscribe().with(progress -> rc.response().setStatusCode(200)
                .putHeader("content-type", "application/json").end(json(progress).encode()),
                failure -> error(rc, 503, "the session store did not answer: " + failure.getMessage()));
    }

    static JsonObject json(Drain.Progress p) {
        JsonObject byState = new JsonObject();
        for (SessionState state : SessionState.values()) {
            byState.put(state.name(), p.byState().getOrDefault(state, 0L));
        }
        JsonObject out = new JsonObject()
                .put("draining", p.draining())
                .put("complete", p.complete())
                .put("allocated", p.allocated())
                .put("live", p.live())
                .put("engine_held", p.engineHeld())
                .put("running_here", p.runningHere())
                .put("sessions_by_state", byState);
        p.since().ifPresent(since -> out.put("since", since.toString()));
        return out;
    }

    private static String presentedKey(RoutingContext rc) {
        return ApiKeys.presentedKey(rc.request().headers().getAll("authorization"),
                rc.request().headers().getAll("x-api-key"));
    }

    private static void error(RoutingContext rc, int status, String message) {
        rc.response().setStatusCode(status).putHeader("content-type", "application/json")
                .end(new JsonObject().put("error", message).encode());
    }
}
