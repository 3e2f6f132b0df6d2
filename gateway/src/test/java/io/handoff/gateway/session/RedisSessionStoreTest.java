package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisDeployment;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore.Allocation;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import io.vertx.mutiny.redis.client.Command;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

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
        return new RedisSessionStore(clients.newClient(), prefix, settings, Duration.ofSeconds(2),
                RedisDeployment.SINGLE_NODE);
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

    /**
     * A call its caller gave up on while it waited for a pooled connection gives that connection back once it gets
     * one. Each such call used to keep it (a client's short deadline, the store's own timeout while a failover held
     * the pool), and once the pool had none left every later call waited out the store's timeout, for good.
     */
    @Test
    void callsGivenUpWhileWaitingForAConnectionLeaveThePoolWhole() {
        Redis client = clients.newClient();
        SessionStore own = new RedisSessionStore(client, "test-" + UUID.randomUUID(),
                new StoreSettings(RETENTION, MAX_LIVE), Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
        List<RedisConnection> held = new ArrayList<>();
        for (int i = 0; i < TestRedisClients.POOL_SIZE; i++) {
            held.add(client.connect().await().atMost(Duration.ofSeconds(5)));
        }
        List<Cancellable> givenUp = new ArrayList<>();
        for (int i = 0; i < TestRedisClients.POOL_SIZE; i++) {
            givenUp.add(own.countLive("t1", clock.instant()).subscribe().with(n -> {
            }, failure -> {
            }));
        }
        givenUp.forEach(Cancellable::cancel); // each waits in the pool's queue now
        held.forEach(connection -> connection.close().await().atMost(Duration.ofSeconds(5)));

        assertEquals(0L, join(own.countLive("t1", clock.instant())), "the store answers: no connection was kept");
    }

    /** One Redis: what an allocation and an ending each take is one call, and the tenant's index follows both. */
    @Test
    void onOneRedisAnAllocationAndAnEndingAreOneCallEach() {
        AtomicReference<Session> allocated = new AtomicReference<>();
        List<String> allocation = callsOfThisStore(() -> allocated.set(allocate("t1", "k1")));
        assertEquals(List.of("EVALSHA"), allocation, "the key reserved and the record created in one script");
        Session s = allocated.get();
        assertEquals(s, reload(s.id()));
        assertEquals(1, join(store.countLive("t1", clock.instant())));

        List<String> ending = callsOfThisStore(() -> join(service.end("t1", s.id(), SessionState.FAILED,
                "the prefill failed", OptionalLong.of(s.epoch()), List.of())));
        assertEquals(List.of("EVALSHA"), ending, "the ending and the tenant's live index in one script");
        assertEquals(0, join(store.countLive("t1", clock.instant())), "the ended session no longer counts");
        assertEquals(SessionState.FAILED, reload(s.id()).state());
    }

    /**
     * The commands this test's store sent while {@code action} ran, in order (from the slow log, which then logs every
     * command; the commands a script runs are logged with no client and left out).
     */
    private List<String> callsOfThisStore(Runnable action) {
        // room for every command of the action (the default keeps 128), whatever else the server runs meanwhile
        join(admin.send(Request.cmd(Command.CONFIG).arg("SET").arg("slowlog-max-len").arg("10000")));
        join(admin.send(Request.cmd(Command.CONFIG).arg("SET").arg("slowlog-log-slower-than").arg("0")));
        join(admin.send(Request.cmd(Command.SLOWLOG).arg("RESET")));
        try {
            action.run();
        } finally {
            join(admin.send(Request.cmd(Command.CONFIG).arg("SET").arg("slowlog-log-slower-than").arg("10000")));
        }
        Response log = join(admin.send(Request.cmd(Command.SLOWLOG).arg("GET").arg("10000")));
        List<String> calls = new ArrayList<>();
        for (int i = log.size() - 1; i >= 0; i--) { // the slow log lists the newest first
            Response entry = log.get(i);
            Response args = entry.get(3);
            boolean fromAClient = !entry.get(4).toString().startsWith("?");
            boolean ours = false;
            for (int a = 0; a < args.size(); a++) {
                ours |= args.get(a).toString().startsWith(prefix + ":");
            }
            if (fromAClient && ours) {
                calls.add(args.get(0).toString().toUpperCase(Locale.ROOT));
            }
        }
        return calls;
    }

    private void setLiveIndexHint(String tenant, String sessionId, Instant leaseExpiry) {
        join(admin.send(Request.cmd(Command.ZADD).arg(prefix + ":{t" + tenant + "}:live")
                .arg(Long.toString(leaseExpiry.toEpochMilli())).arg(sessionId)));
    }
}
