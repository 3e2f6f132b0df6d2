package io.handoff.gateway.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * The shared profile of the gateway's gRPC tests: Redis store, auth on with two tenants and an admin, the reaper
 * driven by the tests rather than a timer. One profile, so Quarkus starts once for all of them.
 */
public class RedisTenancyProfile implements QuarkusTestProfile {

    public static final String TEAM_A_KEY = "key-team-a";
    public static final String TEAM_B_KEY = "key-team-b";
    public static final String QUOTA_TEAM_KEY = "key-team-quota";
    public static final String ADMIN_KEY = "key-admin";
    public static final int QUOTA = 60;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(
                Map.entry("handoff.auth.enabled", "true"),
                Map.entry("handoff.auth.tenants.team-a.api-keys", TEAM_A_KEY),
                Map.entry("handoff.auth.tenants.team-b.api-keys", TEAM_B_KEY),
                Map.entry("handoff.auth.tenants.team-quota.api-keys", QUOTA_TEAM_KEY),
                Map.entry("handoff.auth.admin-keys", ADMIN_KEY),
                Map.entry("handoff.session.max-live-per-tenant", Integer.toString(QUOTA)),
                Map.entry("handoff.session.supported-styles", "context-first,generation-first"),
                Map.entry("handoff.reaper.enabled", "false"),
                Map.entry("handoff.demo.enabled", "false"),
                // generous: a loaded machine must not turn a slow answer into a failure the test did not cause
                Map.entry("handoff.store.redis.timeout", "10s"));
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(RedisTestResource.class));
    }
}
