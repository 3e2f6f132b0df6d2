package io.handoff.gateway.api.rest;

import io.handoff.gateway.tenancy.ApiKeys;
import io.handoff.gateway.tenancy.Caller;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.ext.Provider;

import java.util.List;
import java.util.Optional;

/**
 * Establishes the tenant of every {@link TenantApi} request from {@code Authorization: Bearer <key>} (or
 * {@code x-api-key}), as the gRPC interceptor does: an unknown, missing or repeated key is 401, an admin key is
 * 403.
 */
@Provider
@TenantApi
// A client proxy, created on first use: Quarkus REST sets up its providers before runtime configuration (and so
// the API keys) exists.
@ApplicationScoped
public class TenantApiFilter implements ContainerRequestFilter {

    static final String API_KEY_HEADER = "x-api-key";

    private final ApiKeys keys;
    private final RequestTenant tenant;

    public TenantApiFilter(ApiKeys keys, RequestTenant tenant) {
        this.keys = keys;
        this.tenant = tenant;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        Optional<Caller> caller = keys.resolve(ApiKeys.presentedKey(all(request, HttpHeaders.AUTHORIZATION),
                all(request, API_KEY_HEADER)));
        if (caller.isEmpty()) {
            request.abortWith(HttpStatuses.unauthenticated(ApiKeys.KEY_REQUIRED));
        } else if (caller.get().admin()) {
            request.abortWith(HttpStatuses.permissionDenied(Caller.ADMIN_OWNS_NO_SESSIONS));
        } else {
            tenant.establish(caller.get().tenant());
        }
    }

    private static List<String> all(ContainerRequestContext request, String header) {
        return Optional.ofNullable(request.getHeaders().get(header)).orElse(List.of());
    }
}
