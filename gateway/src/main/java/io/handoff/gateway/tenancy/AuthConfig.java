package io.handoff.gateway.tenancy;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code handoff.auth.*}: API keys and the tenants they belong to. With auth off every caller is the default
 * tenant. Example:
 *
 * <pre>
 * handoff.auth.enabled=true
 * handoff.auth.tenants.team-a.api-keys=key-one,key-two
 * handoff.auth.admin-keys=ops-key
 * </pre>
 */
@ConfigMapping(prefix = "handoff.auth")
public interface AuthConfig {

    @WithDefault("false")
    boolean enabled();

    /** The tenant of every caller while auth is off. */
    @WithDefault("default")
    String defaultTenant();

    /** Tenants by name, each with the API keys that authenticate as it. */
    Map<String, TenantKeys> tenants();

    /** Keys that may call admin operations (drain); they belong to no tenant. */
    Optional<List<String>> adminKeys();

    interface TenantKeys {
        List<String> apiKeys();
    }
}
