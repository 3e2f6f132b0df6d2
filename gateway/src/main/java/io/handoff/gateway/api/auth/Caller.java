package io.handoff.gateway.api.auth;

/**
 * Who is calling, as established from the credential: the tenant whose sessions it may see, and whether it holds
 * an admin key. An admin caller has no tenant's sessions.
 */
public record Caller(String tenant, boolean admin) {
}
