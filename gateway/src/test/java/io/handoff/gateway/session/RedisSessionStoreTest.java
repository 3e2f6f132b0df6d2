package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.time.Duration;
import java.util.UUID;

class RedisSessionStoreTest extends SessionLifecycleContract {

    private static RedisServer server;
    private static TestRedisClients clients;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.startOnFreePort();
        clients = new TestRedisClients(server);
    }

    @AfterAll
    static void stopRedis() {
        clients.close();
        server.stop();
    }

    @Override
    protected SessionStore newStore(StoreSettings settings) {
        return new RedisSessionStore(clients.newClient(), "test-" + UUID.randomUUID(), settings, Duration.ofSeconds(2));
    }
}
