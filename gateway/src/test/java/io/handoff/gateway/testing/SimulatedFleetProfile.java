package io.handoff.gateway.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * The one profile of every Generate test, so that Quarkus starts once for all of them: routes to in-process
 * simulators of vLLM, SGLang and TensorRT-LLM ({@link FleetRoutes}), sessions in a private redis-server, auth off
 * (every caller is the default tenant), and no timers: the tests tick the lease keeper and sweep the reaper
 * themselves, after moving the {@link MutableClock}.
 */
public class SimulatedFleetProfile implements QuarkusTestProfile {

    public static final String TENANT = "default";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "handoff.demo.enabled", "false",
                "handoff.orchestration.keepalive-enabled", "false",
                "handoff.reaper.enabled", "false",
                // no periodic probes either: one landing while a test has crashed an engine counts a failure against
                // that endpoint on every route it serves, and a route whose breaker opens after one failure then
                // keeps it open for the next test (the tests that need a sample take it themselves)
                "handoff.discovery.sampling-enabled", "false",
                // generous: a loaded machine must not turn a slow answer into a failure the test did not cause (a
                // test that pauses Redis cancels its request while the store is still waiting)
                "handoff.store.redis.timeout", "15s");
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(RedisTestResource.class),
                new TestResourceEntry(SimulatedFleetResource.class));
    }
}
