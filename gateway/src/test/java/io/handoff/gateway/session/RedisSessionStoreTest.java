package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore.Allocation;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RedisSessionStoreTest extends SessionLifecycleContract {

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
    protected SessionStore newStore(StoreSettings settings) {
        prefix = "test-" + UUID.randomUUID();
        return new RedisSessionStore(clients.newClient(), prefix, settings, Duration.ofSeconds(2));
    }

    // The tenant's live index is only a hint (docs/api.md, Storage): whether a Generate is still live is decided
    // from the session's record, so a hint that lags in either direction neither runs a request twice nor
    // refuses a fresh attempt.

    @Test
    void aRenewalTheLiveIndexMissedStillKeepsTheGenerateLive() {
        Session first = generate("t1", "gen-1").session();
        join(service.renew("t1", first.id(), Optional.of(MAX_LEASE), OptionalLong.empty()));
        setLiveIndexHint("t1", first.id(), first.leaseExpiresAt()); // as if tenant_touch after the renewal was lost
        clock.advance(DEFAULT_LEASE);

        Allocation duplicate = generate("t1", "gen-1");

        assertFalse(duplicate.created());
        assertEquals(first.id(), duplicate.session().id());
        assertEquals(1, stored());
    }

    @Test
    void anEndTheLiveIndexMissedStillLetsAFreshAttemptIn() {
        Session failed = generate("t1", "gen-1").session();
        join(service.transition("t1", failed.id(), SessionState.FAILED, "prefill failed", OptionalLong.empty()));
        setLiveIndexHint("t1", failed.id(), failed.leaseExpiresAt()); // as if tenant_touch after the end was lost

        Allocation retry = generate("t1", "gen-1");

        assertTrue(retry.created());
        assertNotEquals(failed.id(), retry.session().id());
        assertEquals(1, join(store.countLive("t1", clock.instant())), "the ended attempt no longer counts");
    }

    private void setLiveIndexHint(String tenant, String sessionId, Instant leaseExpiry) {
        join(admin.send(Request.cmd(Command.ZADD).arg(prefix + ":{t" + tenant + "}:live")
                .arg(Long.toString(leaseExpiry.toEpochMilli())).arg(sessionId)));
    }
}
