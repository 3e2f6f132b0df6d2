package io.handoff.gateway.session.store;

import io.handoff.gateway.session.SessionConfig;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Redis;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Clock;

/** The one place that chooses the session store (and the rate-limit store with it), from {@code handoff.store.kind}. */
@ApplicationScoped
public class SessionStoreProducer {

    private static final Logger LOG = Logger.getLogger(SessionStoreProducer.class);

    private final Instance<Redis> quarkusRedis;
    private final QuarkusRedisOptions quarkusRedisOptions;
    private final Vertx vertx;
    private final String clientType;
    private final StoreConfig config;
    private final Clock clock;
    private RedisPerEventLoop storeRedis;

    SessionStoreProducer(Instance<Redis> quarkusRedis, QuarkusRedisOptions quarkusRedisOptions, Vertx vertx,
            @ConfigProperty(name = "quarkus.redis.client-type", defaultValue = "standalone") String clientType,
            StoreConfig config, Clock clock) {
        this.quarkusRedis = quarkusRedis;
        this.quarkusRedisOptions = quarkusRedisOptions;
        this.vertx = vertx;
        this.clientType = clientType;
        this.config = config;
        this.clock = clock;
    }

    @Produces
    @Singleton
    SessionStore sessionStore(SessionConfig sessions) {
        StoreSettings settings = new StoreSettings(sessions.tombstoneRetention(), sessions.maxLivePerTenant());
        return switch (config.kind()) {
            case MEMORY -> {
                LOG.info("KV sessions are kept in memory: one replica only (handoff.store.kind=memory)");
                yield new InMemorySessionStore(settings);
            }
            case REDIS -> {
                RedisDeployment deployment = RedisDeployment.ofClientType(clientType);
                LOG.infof("KV sessions are kept in Redis under key prefix '%s' (%s)", config.redis().keyPrefix(),
                        deployment == RedisDeployment.CLUSTER ? "a Redis Cluster: a script per hash slot"
                                : "one Redis: an allocation and an ending are one script each");
                yield new RedisSessionStore(storeRedis(), config.redis().keyPrefix(), settings,
                        config.redis().timeout(), deployment);
            }
        };
    }

    /** The tenants' rate limits live where the sessions do: shared by every replica exactly when sessions are. */
    @Produces
    @Singleton
    RateLimitStore rateLimitStore() {
        return switch (config.kind()) {
            case MEMORY -> new InMemoryRateLimitStore();
            case REDIS -> new RedisRateLimitStore(storeRedis(), config.redis().keyPrefix(),
                    config.redis().timeout());
        };
    }

    /**
     * The stores' one Redis client: connections kept per event loop ({@link RedisPerEventLoop}), one shared by each
     * loop's calls on one Redis server and a pool per loop otherwise, with the options of Quarkus's client, which is
     * made here only so that its options are known and is never called.
     */
    private synchronized Redis storeRedis() {
        if (storeRedis == null) {
            quarkusRedis.get();
            storeRedis = new RedisPerEventLoop(vertx, quarkusRedisOptions.defaultClient(),
                    RedisPerEventLoop.Sharing.ofClientType(clientType), clock, config.redis().timeout());
            LOG.debugf("The stores keep Redis connections per event loop (%d loops, %s)", storeRedis.loops(),
                    storeRedis.sharing());
        }
        return Redis.newInstance(storeRedis);
    }

    @PreDestroy
    synchronized void close() {
        if (storeRedis != null) {
            storeRedis.close();
        }
    }
}
