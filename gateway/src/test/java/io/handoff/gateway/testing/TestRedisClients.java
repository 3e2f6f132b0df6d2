package io.handoff.gateway.testing;

import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.redis.client.ProtocolVersion;
import io.vertx.redis.client.RedisOptions;

import java.util.ArrayList;
import java.util.List;

/** Vert.x Redis clients configured as the gateway configures its own; each one stands for one replica. */
public final class TestRedisClients implements AutoCloseable {

    private final RedisServer server;
    private final Vertx vertx = Vertx.vertx();
    private final List<Redis> clients = new ArrayList<>();

    public TestRedisClients(RedisServer server) {
        this.server = server;
    }

    public synchronized Redis newClient() {
        Redis client = Redis.createClient(vertx, new RedisOptions()
                .setConnectionString(server.url())
                .setPreferredProtocolVersion(ProtocolVersion.RESP2)
                .setMaxPoolSize(8)
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
