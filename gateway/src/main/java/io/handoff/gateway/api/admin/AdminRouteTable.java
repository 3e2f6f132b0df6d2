package io.handoff.gateway.api.admin;

import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.PoolMembership;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.routing.RouteReload;
import io.handoff.gateway.routing.RouteTable;
import io.handoff.gateway.runtime.ClientText;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.List;

/**
 * The route table over HTTP: what serves now, and a reload without a restart. Admin key only
 * ({@link AdminKeyCheck}: 401 without a key, 403 with another). A reload is this replica's alone: an operator makes
 * it on every replica (or has each watch the same file, {@code handoff.routes-file}).
 *
 * <ul>
 * <li>{@code GET /admin/routes}: the generation serving, and every route with its model names, family, styles and
 * both pools' endpoints as {@code GET /admin/routes/{route}/endpoints} lists them; the routes a reload took out that
 * still finish what runs on them are listed by name under {@code retired};</li>
 * <li>{@code POST /admin/routes/reload} with the routes as a properties text ({@code handoff.routes.<name>.*}, as
 * the gateway reads them at start): 200 with the outcome ({@code applied}, or {@code unchanged} when every route is
 * as it is) and the generation serving; 422 when the text cannot be routes or a route fails negotiation, with the
 * reason and the generation that keeps serving. Nothing changes on a 422.</li>
 * </ul>
 */
@ApplicationScoped
public class AdminRouteTable {

    /** Routes for a fleet of hundreds of endpoints fit in far less. */
    private static final int MAX_BODY_BYTES = 1024 * 1024;

    private final AdminKeyCheck check;
    private final RouteRegistry routes;
    private final AdminEndpoints endpoints;

    public AdminRouteTable(AdminKeyCheck check, RouteRegistry routes, AdminEndpoints endpoints) {
        this.check = check;
        this.routes = routes;
        this.endpoints = endpoints;
    }

    void routes(@Observes Router router) {
        router.get("/admin/routes").handler(this::table);
        router.post("/admin/routes/reload").handler(BodyHandler.create().setBodyLimit(MAX_BODY_BYTES))
                .handler(this::reload);
    }

    private void table(RoutingContext rc) {
        if (!check.admits(rc)) {
            return;
        }
        RouteTable table = routes.table();
        JsonArray all = new JsonArray();
        table.all().forEach(route -> all.add(json(route)));
        JsonArray retired = new JsonArray();
        routes.retired().forEach(route -> retired.add(route.name()));
        answer(rc, 200, new JsonObject().put("generation", table.generation()).put("routes", all)
                .put("retired", retired));
    }

    private JsonObject json(Route route) {
        JsonObject pools = new JsonObject();
        for (String pool : List.of("prefill", "decode")) {
            EndpointPool.Membership now = PoolMembership.pool(route, pool).membership();
            JsonArray members = new JsonArray();
            now.active().forEach(m -> members.add(endpoints.json(route, pool, m, true)));
            now.retired().forEach(m -> members.add(endpoints.json(route, pool, m, false)));
            pools.put(pool, members);
        }
        return new JsonObject()
                .put("name", route.name())
                .put("model", route.settings().model())
                .put("aliases", new JsonArray(route.settings().aliases()))
                .put("family", route.family())
                .put("default_style", route.settings().defaultStyle().configName())
                .put("styles", new JsonArray(route.settings().styles().stream().map(ScheduleStyle::configName)
                        .sorted().toList()))
                .put("in_flight", route.inFlight().get())
                .put("pools", pools);
    }

    private void reload(RoutingContext rc) {
        if (!check.admits(rc)) {
            return;
        }
        String text = rc.body().asString();
        // off the event loop: a reload waits for another one (or the file's) and creates connectors
        rc.vertx().executeBlocking(() -> routes.reload(text, "admin"), false).onComplete(done -> {
            if (done.failed()) {
                AdminKeyCheck.error(rc, 500, "the reload failed: " + ClientText.withoutAddresses(
                        String.valueOf(done.cause().getMessage())));
            } else {
                answer(rc, done.result());
            }
        });
    }

    private static void answer(RoutingContext rc, RouteReload reload) {
        if (reload.refused()) {
            answer(rc, 422, new JsonObject()
                    .put("error", ClientText.withoutAddresses(reload.reason()))
                    .put("outcome", reload.outcome().label())
                    .put("generation", reload.generation()));
            return;
        }
        answer(rc, 200, new JsonObject()
                .put("outcome", reload.outcome().label())
                .put("generation", reload.generation())
                .put("added", new JsonArray(reload.added()))
                .put("changed", new JsonArray(reload.changed()))
                .put("removed", new JsonArray(reload.removed())));
    }

    private static void answer(RoutingContext rc, int status, JsonObject body) {
        rc.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
    }
}
