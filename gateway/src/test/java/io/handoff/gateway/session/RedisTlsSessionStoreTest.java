package io.handoff.gateway.session;

import io.handoff.gateway.session.store.RedisDeployment;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestCertificates;
import io.handoff.gateway.testing.TestRedisClients;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.redis.client.RedisOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The store contract over TLS ({@code rediss://}), the client trusting only the test's own certificate authority
 * and checking the server's name, as docs/reliability.md tells operators to configure it. The certificates are
 * made when the test runs.
 */
class RedisTlsSessionStoreTest extends SessionLifecycleContract {

    private static TestCertificates certificates;
    private static RedisServer server;
    private static TestRedisClients clients;

    @BeforeAll
    static void startRedis() {
        certificates = TestCertificates.create();
        server = RedisServer.startOnFreePort(RedisServer.Options.plain()
                .withArguments(certificates.redisServerArguments()).withSecondPort(RedisServer.SecondPort.TLS));
        clients = new TestRedisClients(overTls(new PemTrustOptions()
                .addCertPath(certificates.caCertificate().toString())));
    }

    @AfterAll
    static void stopRedis() {
        try {
            if (clients != null) {
                clients.close();
            }
            if (server != null) {
                server.stop();
            }
        } finally {
            if (certificates != null) {
                certificates.close();
            }
        }
    }

    /** rediss:// to the TLS port, trusting {@code trust}, verifying the host name as HTTPS does. */
    private static RedisOptions overTls(PemTrustOptions trust) {
        return new RedisOptions().setConnectionString("rediss://127.0.0.1:" + server.tlsPort())
                .setNetClientOptions(new NetClientOptions().setSsl(true).setTrustOptions(trust)
                        .setHostnameVerificationAlgorithm("HTTPS"));
    }

    @Override
    protected SessionStore newStore(StoreSettings settings) {
        return new RedisSessionStore(clients.newClient(), "tls-" + UUID.randomUUID(), settings,
                Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
    }

    @Test
    void aServerTheClientDoesNotTrustIsRefused() {
        // an authority of its own that signed nothing of this server: the handshake must fail, not fall back
        try (TestCertificates stranger = TestCertificates.create();
                TestRedisClients untrusting = new TestRedisClients(overTls(new PemTrustOptions()
                        .addCertPath(stranger.caCertificate().toString())))) {
            assertUnavailable(untrusting);
        }
    }

    @Test
    void plainTextToTheTlsPortIsRefused() {
        try (TestRedisClients plain = new TestRedisClients(new RedisOptions()
                .setConnectionString("redis://127.0.0.1:" + server.tlsPort()))) {
            assertUnavailable(plain);
        }
    }

    private static void assertUnavailable(TestRedisClients clientsOfTheTest) {
        SessionStore unreachable = new RedisSessionStore(clientsOfTheTest.newClient(), "tls-" + UUID.randomUUID(),
                new StoreSettings(RETENTION, MAX_LIVE), Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
        SessionException e = assertThrows(SessionException.class, () -> join(unreachable.ping()));
        assertEquals(SessionFailure.STORE_UNAVAILABLE, e.failure());
    }
}
