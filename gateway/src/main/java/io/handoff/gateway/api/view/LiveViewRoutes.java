package io.handoff.gateway.api.view;

import io.handoff.gateway.api.admin.AdminKeyCheck;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Serves the live view: {@code /handoff} leads to the page (static files, which hold no data), and
 * {@code GET /handoff/state} answers what the page shows as JSON, behind the admin-key check while auth is on. The
 * page fetches it once a second; each answer is a handful of bounded store reads, whatever the store holds.
 */
@ApplicationScoped
public class LiveViewRoutes {

    /** The path of the JSON document the page polls. */
    public static final String STATE = "/handoff/state";

    private final AdminKeyCheck check;
    private final LiveViewState state;

    public LiveViewRoutes(AdminKeyCheck check, LiveViewState state) {
        this.check = check;
        this.state = state;
    }

    void routes(@Observes Router router) {
        // a regular expression matches the path exactly: a plain "/handoff" would match "/handoff/" too (a loop)
        router.getWithRegex("/handoff").handler(rc -> rc.response().setStatusCode(302)
                .putHeader("location", "/handoff/").end());
        router.get(STATE).handler(rc -> {
            if (!check.admitsReader(rc)) {
                return;
            }
            state.now().subscribe().with(json -> rc.response().setStatusCode(200)
                    .putHeader("content-type", "application/json").putHeader("cache-control", "no-store")
                    .end(json.encode()),
                    failure -> AdminKeyCheck.error(rc, 503, "the session store did not answer: "
                            + failure.getClass().getSimpleName()));
        });
    }
}
