package io.handoff.gateway.session.store;

import io.handoff.gateway.session.SessionConfig;
import io.vertx.mutiny.redis.client.Redis;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** The one place that chooses the session store (and the rate-limit store with it), from {@code handoff.store.kind}. */
@ApplicationScoped
public class SessionStoreProducer {

    private static final Logger LOG = Logger.getLogger(SessionStoreProducer.class);

    @Produces
    @Singleton
    SessionStore sessionStore(StoreConfig config, SessionConfig sessions, Instance<Redis> redis,
            @ConfigProperty(name = "quarkus.redis.client-type", defaultValue = "standalone") String clientType) {
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
                yield new RedisSessionStore(redis.get(), config.redis().keyPrefix(), settings,
                        config.redis().timeout(), deployment);
            }
        };
    }

    /** The tenants' rate limits live where the sessions do: shared by every replica exactly when sessions are. */
    @Produces
    @Singleton
    RateLimitStore rateLimitStore(StoreConfig config, Instance<Redis> redis) {
        return switch (config.kind()) {
            case MEMORY -> new InMemoryRateLimitStore();
            case REDIS -> new RedisRateLimitStore(redis.get(), config.redis().keyPrefix(), config.redis().timeout());
        };
    }
}
