package io.handoff.gateway.session.store;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;

/** {@code handoff.store.*}: which store holds sessions, and how to reach Redis when it is Redis. */
@ConfigMapping(prefix = "handoff.store")
public interface StoreConfig {

    enum Kind {
        /** This JVM only: one replica. The embedded default. */
        MEMORY,
        /** Redis through the Quarkus Redis client ({@code quarkus.redis.hosts}): any number of replicas. */
        REDIS
    }

    @WithDefault("memory")
    Kind kind();

    Redis redis();

    interface Redis {
        /** Prefix of every key Handoff writes, so several deployments (or tests) can share one Redis. */
        @WithDefault("handoff")
        String keyPrefix();

        /** How long one store operation may take before the caller gets UNAVAILABLE. */
        @WithDefault("2s")
        Duration timeout();
    }
}
