package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisDeployment;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisAcl;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.redis.client.RedisOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store contract against a Redis whose default user is the administrator's (password) and whose store user is
 * exactly the ACL line docs/reliability.md gives operators. After every test Redis's ACL log must hold no denial:
 * a command of the store that the line forgot would show there even where the contract only sees UNAVAILABLE.
 */
class RedisAclSessionStoreTest extends SessionLifecycleContract {

    private static final String ADMIN_PASSWORD = "acl-admin";
    private static final String STORE_PASSWORD = "acl-store";

    private static RedisServer server;
    private static TestRedisClients clients;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.startOnFreePort(RedisServer.Options.plain().withAdminPassword(ADMIN_PASSWORD));
        RedisAcl.createUser(server, STORE_PASSWORD, "acl-*");
        clients = new TestRedisClients(new RedisOptions()
                .setConnectionString(RedisAcl.urlAs(STORE_PASSWORD, server.url())));
    }

    @AfterAll
    static void stopRedis() {
        try {
            if (clients != null) {
                clients.close();
            }
        } finally {
            if (server != null) {
                server.stop();
            }
        }
    }

    @Override
    protected SessionStore newStore(StoreSettings settings) {
        return new RedisSessionStore(clients.newClient(), "acl-" + UUID.randomUUID(), settings,
                Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
    }

    @AfterEach
    void theDocumentedUserWasRefusedNothing() {
        assertEquals("", server.reply("ACL", "LOG"), "denied to " + RedisAcl.documentedLine());
    }

    @Test
    void theDocumentedUserIsRefusedWhatHandoffNeverDoes() {
        Redis asStore = clients.newClient();
        List<List<String>> forbidden = List.of(
                List.of("FLUSHALL"),
                List.of("KEYS", "*"),
                List.of("CONFIG", "GET", "maxmemory"),
                List.of("SCRIPT", "FLUSH"),
                List.of("CLIENT", "KILL", "TYPE", "normal"),
                List.of("GET", "another-deployment:key"),
                List.of("EVAL", "return redis.call('FLUSHALL')", "0"));
        for (List<String> command : forbidden) {
            Request request = Request.cmd(Command.create(command.get(0)));
            command.subList(1, command.size()).forEach(request::arg);
            Throwable refusal = assertThrows(Throwable.class,
                    () -> asStore.send(request).await().atMost(Duration.ofSeconds(10)), String.join(" ", command));
            assertTrue(refusal.getMessage().contains("NOPERM") || refusal.getMessage().contains("can't run this"),
                    String.join(" ", command) + " answered " + refusal.getMessage());
        }
        assertEquals("OK", server.reply("ACL", "LOG", "RESET"));
    }

    @Test
    void aWrongPasswordLeavesTheStoreUnavailable() {
        try (TestRedisClients wrong = new TestRedisClients(new RedisOptions()
                .setConnectionString(RedisAcl.urlAs("not-the-password", server.url())))) {
            SessionStore refused = new RedisSessionStore(wrong.newClient(), "acl-" + UUID.randomUUID(),
                    new StoreSettings(RETENTION, MAX_LIVE), Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
            SessionException e = assertThrows(SessionException.class, () -> join(refused.ping()));
            assertEquals(SessionFailure.STORE_UNAVAILABLE, e.failure());
        }
        assertTrue(server.reply("ACL", "LOG").contains("auth"), "Redis logged the refused login");
        assertEquals("OK", server.reply("ACL", "LOG", "RESET"));
    }
}
