package io.handoff.gateway.tenancy;

import jakarta.inject.Singleton;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Resolves a presented API key to its {@link Caller}. Keys are held only as SHA-256 digests and looked up by
 * digest, so the lookup time does not depend on how much of a guessed key matched.
 */
@Singleton
public class ApiKeys {

    /** Why a call without a valid key is refused, in the same words on every transport. */
    public static final String KEY_REQUIRED = "a valid API key is required (authorization: Bearer <key>)";

    private static final Pattern TENANT_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final boolean enabled;
    private final Caller anonymous;
    private final Map<String, Caller> byDigest = new HashMap<>();
    private final Set<String> tenants = new LinkedHashSet<>();

    public ApiKeys(AuthConfig config) {
        this.enabled = config.enabled();
        this.anonymous = new Caller(requireTenantName(config.defaultTenant()), false);
        tenants.add(anonymous.tenant());
        config.tenants().forEach((tenant, keys) -> {
            tenants.add(requireTenantName(tenant));
            keys.apiKeys().forEach(key -> register(key, new Caller(tenant, false)));
        });
        config.adminKeys().ifPresent(keys -> keys.forEach(key -> register(key, new Caller("", true))));
        if (enabled && byDigest.isEmpty()) {
            throw new IllegalStateException("handoff.auth.enabled=true but no API keys are configured");
        }
    }

    private void register(String key, Caller caller) {
        if (key.isBlank()) {
            throw new IllegalStateException("an empty API key is configured for " + caller);
        }
        if (byDigest.putIfAbsent(digest(key), caller) != null) {
            throw new IllegalStateException("one API key is configured twice in handoff.auth");
        }
    }

    private static String requireTenantName(String tenant) {
        if (!TENANT_NAME.matcher(tenant).matches()) {
            throw new IllegalStateException("tenant name '" + tenant + "' must match " + TENANT_NAME.pattern());
        }
        return tenant;
    }

    public boolean enabled() {
        return enabled;
    }

    /** Every tenant a caller can be: the configured ones and the default tenant (every caller while auth is off). */
    public Set<String> tenants() {
        return Collections.unmodifiableSet(tenants);
    }

    /** The caller for a presented key; with auth off, the default tenant whatever is presented. */
    public Optional<Caller> resolve(String presentedKey) {
        if (!enabled) {
            return Optional.of(anonymous);
        }
        if (presentedKey == null || presentedKey.isEmpty()) {
            return Optional.empty();
        }
        return Optional.ofNullable(byDigest.get(digest(presentedKey)));
    }

    /**
     * The key a caller presents: {@code Authorization: Bearer <key>}, else {@code x-api-key}. Both transports
     * read it the same way; either header may be null.
     */
    private static String presentedKey(String authorization, String apiKeyHeader) {
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return authorization.substring(7).trim();
        }
        return apiKeyHeader;
    }

    /**
     * The key a caller presents, from every value each header was given: a header given more than once presents no
     * key at all. Which of two credentials counts is exactly what a proxy in front and the gateway could read
     * differently (the first, the last, both joined), so neither is taken.
     */
    public static String presentedKey(List<String> authorization, List<String> apiKeyHeader) {
        if (authorization.size() > 1 || apiKeyHeader.size() > 1) {
            return null;
        }
        return presentedKey(authorization.isEmpty() ? null : authorization.get(0),
                apiKeyHeader.isEmpty() ? null : apiKeyHeader.get(0));
    }

    /**
     * Whether a presented key is one of {@code handoff.auth.admin-keys}. Asked by admin operations, also while auth
     * is off: with auth off every caller is the default tenant, and admin operations still need an admin key.
     */
    public boolean isAdminKey(String presentedKey) {
        if (presentedKey == null || presentedKey.isEmpty()) {
            return false;
        }
        Caller caller = byDigest.get(digest(presentedKey));
        return caller != null && caller.admin();
    }

    private static String digest(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
