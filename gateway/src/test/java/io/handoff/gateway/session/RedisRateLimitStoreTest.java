package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RateLimitStore;
import io.handoff.gateway.session.store.RedisRateLimitStore;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract against a real redis-server, and what only Redis does: two replicas' stores (each its own client,
 * as two gateways have; in one JVM here) share one tenant's limit, the keys go away once the limit is empty, and a
 * limit is not forgotten while real time runs past the callers' clock (Redis expires keys by its own).
 */
class RedisRateLimitStoreTest extends RateLimitStoreContract {

    private static RedisServer server;
    private static TestRedisClients clients;
    private static Redis admin;

    private String prefix;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.startOnFreePort();
        clients = new TestRedisClients(server);
        admin = clients.newClient();
    }

    @AfterAll
    static void stopRedis() {
        clients.close();
        server.stop();
    }

    @Override
    protected RateLimitStore newStore() {
        prefix = "test-" + UUID.randomUUID();
        return replica();
    }

    private RateLimitStore replica() {
        return new RedisRateLimitStore(clients.newClient(), prefix, Duration.ofSeconds(2));
    }

    @Test
    void twoReplicasOnOneRedisShareOneLimit() {
        RateLimitStore other = replica();
        assertTrue(take(store, requests(2)).allowed());
        assertTrue(take(other, requests(1)).allowed());

        assertFalse(take(store, requests(1)).allowed());
        assertEquals(Duration.ofMillis(500), take(other, requests(1)).retryAfter());
        clock.advance(Duration.ofMillis(500));
        assertTrue(take(other, requests(1)).allowed());
        assertFalse(take(store, requests(1)).allowed());
    }

    @Test
    void aLimitHoldsWhileRedisTimeRunsAheadOfTheCallersClock() throws InterruptedException {
        assertTrue(take(store, tokens(1)).allowed()); // a TAT 10 ms ahead of the callers' clock
        // Redis's clock runs on, the callers' does not (a replica whose clock lags Redis's, or a test clock): the
        // limit must still count that token
        Thread.sleep(50);

        assertFalse(take(store, tokens(1000)).allowed());
    }

    @Test
    void theTenantsLimitKeysShareItsHashTagAndExpireOnceEmpty() {
        take(store, requests(1));
        String key = prefix + ":{t" + tenant + "}:rate:requests";
        long ttl = admin.send(Request.cmd(Command.PTTL).arg(key)).await().indefinitely().toLong();
        // its TAT, 500 ms ahead, and the minute's grace that covers the replicas' clocks against Redis's
        assertTrue(ttl > 60_000 && ttl <= 60_500, "ttl " + ttl);

        adjust(store, requests(-1));
        assertEquals(0, admin.send(Request.cmd(Command.EXISTS).arg(key)).await().indefinitely().toInteger());
    }
}
