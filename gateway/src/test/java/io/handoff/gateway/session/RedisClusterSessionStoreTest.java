package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisDeployment;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisAcl;
import io.handoff.gateway.testing.RedisCluster;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store contract on a real Redis Cluster (three masters, three replicas) through the cluster client
 * ({@code quarkus.redis.client-type=cluster}), as the ACL user docs/reliability.md documents. A script whose keys
 * crossed hash slots would fail here with CROSSSLOT, and a command the documented user may not run with NOPERM.
 */
class RedisClusterSessionStoreTest extends SessionLifecycleContract {

    private static final String ADMIN_PASSWORD = "cluster-admin";
    private static final String STORE_PASSWORD = "cluster-store";

    private static RedisCluster cluster;
    private static TestRedisClients clients;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(RedisServer.Options.plain().withAdminPassword(ADMIN_PASSWORD));
        cluster.nodes().forEach(node -> RedisAcl.createUser(node, STORE_PASSWORD, "cluster-*"));
        clients = new TestRedisClients(cluster.clientOptions(STORE_PASSWORD));
    }

    @AfterAll
    static void stopCluster() {
        try {
            if (clients != null) {
                clients.close();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    private String prefix;

    @Override
    protected SessionStore newStore(StoreSettings settings) {
        prefix = "cluster-" + UUID.randomUUID();
        return new RedisSessionStore(clients.newClient(), prefix, settings, Duration.ofSeconds(2),
                RedisDeployment.CLUSTER);
    }

    @Test
    void sessionsSpreadOverEveryMaster() {
        // 256 buckets of sessions, each its own hash tag: a deployment's sessions are not pinned to one master
        // a tenant of its own per session: one tenant may hold only MAX_LIVE live sessions, too few to reach every
        // master for certain (5 random buckets miss one of 3 masters about 4 times in 10)
        for (int i = 0; i < 1000 && !cluster.masters().stream().allMatch(this::holdsKeysOfThisTest); i++) {
            allocate("spread-tenant-" + i, "spread-" + i);
        }
        for (RedisServer master : cluster.masters()) {
            assertTrue(holdsKeysOfThisTest(master), master.address() + " holds no session of this test");
        }
    }

    private boolean holdsKeysOfThisTest(RedisServer master) {
        return !master.reply("KEYS", prefix + ":{s*").isEmpty();
    }

    @Test
    void aKeyPrefixThatWouldChooseTheHashSlotItselfIsRefused() {
        // a prefix with braces would become (part of) every key's hash tag: all of a deployment's keys on one
        // master, or, with "{}", scripts whose keys cross slots
        for (String prefix : new String[] {"handoff{prod}", "{}", "a}b"}) {
            assertThrows(IllegalArgumentException.class, () -> new RedisSessionStore(clients.newClient(), prefix,
                    new StoreSettings(RETENTION, MAX_LIVE), Duration.ofSeconds(2), RedisDeployment.CLUSTER));
        }
    }
}
