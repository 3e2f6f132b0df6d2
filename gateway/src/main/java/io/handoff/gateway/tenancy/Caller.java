package io.handoff.gateway.tenancy;

/**
 * Who is calling, as established from the credential: the tenant whose sessions it may see, and whether it holds
 * an admin key. An admin caller has no tenant's sessions.
 */
public record Caller(String tenant, boolean admin) {

    /** Why an admin key is refused on session operations, in the same words on every transport. */
    public static final String ADMIN_OWNS_NO_SESSIONS =
            "admin keys manage the deployment; KV sessions belong to tenants";
}
