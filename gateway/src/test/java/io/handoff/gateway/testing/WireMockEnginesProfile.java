package io.handoff.gateway.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * The guarded engine calls' profile: one SGLang route to the WireMock engines of {@link WireMockEnginesResource},
 * sessions in memory, nothing periodic (no reaper, no fleet sampling: a test calls what it checks), and the guards'
 * waits a few milliseconds, so that a retry costs the test nothing.
 */
public class WireMockEnginesProfile implements QuarkusTestProfile {

    /** Immediate retries of a discharge call in this profile: every failing discharge reaches the engine this + 1 times. */
    public static final int DISCHARGE_RETRIES = 2;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(
                Map.entry("handoff.demo.enabled", "false"),
                Map.entry("handoff.reaper.enabled", "false"),
                Map.entry("handoff.discovery.sampling-enabled", "false"),
                Map.entry("handoff.orchestration.keepalive-enabled", "false"),
                Map.entry("handoff.reaper.discharge-retries", Integer.toString(DISCHARGE_RETRIES)),
                Map.entry("handoff.reaper.discharge-retry-delay", "5ms"),
                Map.entry("handoff.reaper.discharge-retry-max-delay", "20ms"),
                Map.entry("handoff.reaper.discharge-retry-jitter", "2ms"),
                // generous: a loaded machine must not turn a slow answer into a failure the test did not cause
                Map.entry("handoff.reaper.discharge-timeout", "10s"),
                Map.entry("handoff.discovery.probe-timeout", "10s"),
                Map.entry("handoff.discovery.probe-retry-delay", "5ms"),
                Map.entry("handoff.discovery.probe-retry-jitter", "2ms"));
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(WireMockEnginesResource.class));
    }
}
