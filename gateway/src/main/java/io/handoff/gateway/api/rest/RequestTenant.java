package io.handoff.gateway.api.rest;

import jakarta.enterprise.context.RequestScoped;

/** The tenant {@link TenantApiFilter} established for the current HTTP request. */
@RequestScoped
public class RequestTenant {

    private String tenant;

    void establish(String tenant) {
        this.tenant = tenant;
    }

    public String get() {
        if (tenant == null) {
            // Only reachable if a resource forgot @TenantApi; failing closed beats acting as nobody.
            throw new IllegalStateException("no tenant established for this request");
        }
        return tenant;
    }
}
