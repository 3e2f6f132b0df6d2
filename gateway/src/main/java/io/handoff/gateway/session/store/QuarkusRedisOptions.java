package io.handoff.gateway.session.store;

import io.quarkus.redis.client.RedisOptionsCustomizer;
import io.quarkus.redis.runtime.client.VertxRedisClientFactory;
import io.vertx.redis.client.RedisOptions;
import jakarta.inject.Singleton;

/**
 * Keeps the options Quarkus built for its default Redis client from {@code quarkus.redis.*}, as they stand once every
 * setting is applied (Quarkus hands them to its customizers last), so that the store's own clients
 * ({@link RedisPerEventLoop}) connect exactly as Quarkus's would, TLS and credentials included. It changes nothing.
 */
@Singleton
public class QuarkusRedisOptions implements RedisOptionsCustomizer {

    private volatile RedisOptions defaultClient;

    @Override
    public void customize(String clientName, RedisOptions options) {
        if (VertxRedisClientFactory.DEFAULT_CLIENT.equals(clientName)) {
            defaultClient = new RedisOptions(options);
        }
    }

    /** The default client's options; Quarkus makes that client (and so calls {@link #customize}) before it is used. */
    RedisOptions defaultClient() {
        RedisOptions options = defaultClient;
        if (options == null) {
            throw new IllegalStateException("Quarkus has not made its default Redis client yet");
        }
        return options;
    }
}
