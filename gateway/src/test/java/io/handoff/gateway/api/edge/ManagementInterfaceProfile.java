package io.handoff.gateway.api.edge;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/**
 * The gateway built with Quarkus' management interface (health and metrics on a port of their own, off the public
 * listener; {@code quarkus.management.enabled} is fixed at build time, so this profile builds it again), and an idle
 * timeout short enough to watch a connection being closed. Sessions in memory, no engines: the edge is all it tests.
 */
public class ManagementInterfaceProfile implements QuarkusTestProfile {

    static final String IDLE_TIMEOUT = "2s";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "quarkus.management.enabled", "true",
                "quarkus.management.test-port", "0",
                "quarkus.http.idle-timeout", IDLE_TIMEOUT,
                "handoff.demo.enabled", "false",
                "handoff.reaper.enabled", "false",
                "handoff.discovery.sampling-enabled", "false");
    }
}
