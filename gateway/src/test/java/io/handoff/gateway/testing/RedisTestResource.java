package io.handoff.gateway.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;
import java.util.UUID;

/** Starts a redis-server of the test's own for a Quarkus test profile and points the gateway at it. */
public class RedisTestResource implements QuarkusTestResourceLifecycleManager {

    private static volatile RedisServer server;

    /** The server of the running profile, so a test can stop and restart it. */
    public static RedisServer server() {
        return server;
    }

    @Override
    public Map<String, String> start() {
        server = RedisServer.startOnFreePort();
        return Map.of(
                "handoff.store.kind", "redis",
                "quarkus.redis.hosts", server.url(),
                "handoff.store.redis.key-prefix", "test-" + UUID.randomUUID());
    }

    @Override
    public void stop() {
        if (server != null) {
            server.stop();
        }
    }
}
