package io.handoff.gateway.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * The shared profile of the control-plane tests: routes to simulated engines of each family (see
 * {@link SimFleetTestResource}), sessions in a real Redis, auth on with two tenants and an admin, and everything
 * periodic (fleet sampling, lease keepalive, reaper) driven by the tests on the {@link MutableClock}.
 */
public class ControlPlaneProfile implements QuarkusTestProfile {

    public static final String TEAM_A_KEY = "cp-key-team-a";
    public static final String TEAM_B_KEY = "cp-key-team-b";
    public static final String ADMIN_KEY = "cp-key-admin";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(
                Map.entry("handoff.auth.enabled", "true"),
                Map.entry("handoff.auth.tenants.team-a.api-keys", TEAM_A_KEY),
                Map.entry("handoff.auth.tenants.team-b.api-keys", TEAM_B_KEY),
                Map.entry("handoff.auth.admin-keys", ADMIN_KEY),
                Map.entry("handoff.reaper.enabled", "false"),
                Map.entry("handoff.demo.enabled", "false"),
                Map.entry("handoff.orchestration.keepalive-enabled", "false"),
                Map.entry("handoff.discovery.sampling-enabled", "false"),
                Map.entry("handoff.session.max-lease", "1h"),
                // generous: a loaded machine must not turn a slow answer into a failure the test did not cause
                Map.entry("handoff.store.redis.timeout", "10s"),
                Map.entry("handoff.discovery.store-timeout", "10s"),
                Map.entry("handoff.discovery.probe-timeout", "15s"));
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(RedisTestResource.class),
                new TestResourceEntry(SimFleetTestResource.class));
    }
}
