package io.handoff.gateway.api.admin;

import io.handoff.gateway.tenancy.ApiKeys;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Singleton;

/**
 * The one check of an admin key over HTTP, for every admin surface: the key is read as {@code authorization: Bearer
 * <key>} or {@code x-api-key}; no key is 401, a key that is not one of {@code handoff.auth.admin-keys} (a tenant's,
 * or none at all) is 403. A refused call has been answered when the check returns false.
 */
@Singleton
public class AdminKeyCheck {

    private final ApiKeys keys;

    public AdminKeyCheck(ApiKeys keys) {
        this.keys = keys;
    }

    /** Whether the call presents an admin key; also while auth is off (operations that change the deployment). */
    public boolean admits(RoutingContext rc) {
        String key = ApiKeys.presentedKey(rc.request().headers().getAll("authorization"),
                rc.request().headers().getAll("x-api-key"));
        if (key == null || key.isEmpty()) {
            error(rc, 401, "an admin key is required (authorization: Bearer <key>)");
            return false;
        }
        if (!keys.isAdminKey(key)) {
            error(rc, 403, "admin operations need a key from handoff.auth.admin-keys; tenant keys cannot call them");
            return false;
        }
        return true;
    }

    /**
     * Whether the call may read what only operators see: with auth on it must present an admin key, with auth off
     * (every caller is the default tenant, nothing is secret from a caller) anyone may.
     */
    public boolean admitsReader(RoutingContext rc) {
        return !keys.enabled() || admits(rc);
    }

    /** Answers an admin call with an error, in the shape every admin answer has. */
    public static void error(RoutingContext rc, int status, String message) {
        rc.response().setStatusCode(status).putHeader("content-type", "application/json")
                .end(new JsonObject().put("error", message).encode());
    }
}
