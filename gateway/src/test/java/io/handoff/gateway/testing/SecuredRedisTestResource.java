package io.handoff.gateway.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;
import java.util.UUID;

/**
 * A redis-server as docs/reliability.md tells operators to run one: TLS on its own port with a certificate of the
 * test's own authority, the default user kept for the administrator, and the store's user exactly the documented
 * ACL line. The gateway is configured with the documented settings only: {@code HANDOFF_REDIS_URL} naming the
 * user and password ({@code rediss://handoff:<password>@host:port}) and a Quarkus TLS configuration that trusts
 * the authority.
 */
public class SecuredRedisTestResource implements QuarkusTestResourceLifecycleManager {

    public static final String ADMIN_PASSWORD = "secured-admin";
    public static final String STORE_PASSWORD = "secured-store";
    /** Prefixes of this resource's deployments; the ACL user may touch no other key. */
    public static final String PREFIX_GLOB = "secured-*";

    private static volatile RedisServer server;
    private static volatile String keyPrefix;
    private TestCertificates certificates;

    public static RedisServer server() {
        return server;
    }

    public static String keyPrefix() {
        return keyPrefix;
    }

    @Override
    public Map<String, String> start() {
        certificates = TestCertificates.create();
        server = RedisServer.startOnFreePort(RedisServer.Options.plain().withAdminPassword(ADMIN_PASSWORD)
                .withArguments(certificates.redisServerArguments()).withSecondPort(RedisServer.SecondPort.TLS));
        RedisAcl.createUser(server, STORE_PASSWORD, PREFIX_GLOB);
        keyPrefix = "secured-" + UUID.randomUUID();
        return Map.of(
                "handoff.store.kind", "redis",
                "quarkus.redis.hosts", RedisAcl.urlAs(STORE_PASSWORD, "rediss://127.0.0.1:" + server.tlsPort()),
                "quarkus.redis.tls-configuration-name", "redis",
                "quarkus.tls.redis.trust-store.pem.certs", certificates.caCertificate().toString(),
                // the TLS registry sets no default, and the Redis client refuses TLS without one
                "quarkus.tls.redis.hostname-verification-algorithm", "HTTPS",
                "handoff.store.redis.key-prefix", keyPrefix);
    }

    @Override
    public void stop() {
        try {
            if (server != null) {
                server.stop();
            }
        } finally {
            if (certificates != null) {
                certificates.close();
            }
        }
    }
}
