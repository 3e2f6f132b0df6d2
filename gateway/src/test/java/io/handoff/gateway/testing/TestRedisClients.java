package io.handoff.gateway.testing;

import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.redis.client.ProtocolVersion;
import io.vertx.redis.client.RedisOptions;

import java.util.ArrayList;
import java.util.List;

/**
 * Vert.x Redis clients configured as the gateway configures its own (application.properties: RESP2, the pool's
 * sizes); each one stands for one replica. What differs between topologies (the client type, the endpoints, the
 * credentials in their URLs, TLS) comes from the options the test hands in.
 */
public final class TestRedisClients implements AutoCloseable {

    /** Connections per node in each client's pool. */
    public static final int POOL_SIZE = 8;

    private final RedisOptions topology;
    private final Vertx vertx = Vertx.vertx();
    private final List<Redis> clients = new ArrayList<>();

    /** Clients of one standalone server, as the default user. */
    public TestRedisClients(RedisServer server) {
        this(new RedisOptions().setConnectionString(server.url()));
    }

    public TestRedisClients(RedisOptions topology) {
        this.topology = topology;
    }

    public synchronized Redis newClient() {
        Redis client = Redis.createClient(vertx, new RedisOptions(topology)
                .setPreferredProtocolVersion(ProtocolVersion.RESP2)
                .setMaxPoolSize(POOL_SIZE)
                .setMaxPoolWaiting(1024));
        clients.add(client);
        return client;
    }

    @Override
    public synchronized void close() {
        clients.forEach(Redis::close);
        vertx.closeAndAwait();
    }
}
