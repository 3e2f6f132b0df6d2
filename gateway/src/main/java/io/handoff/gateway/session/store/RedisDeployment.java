package io.handoff.gateway.session.store;

import java.util.Locale;

/**
 * What one Lua script may touch. A script's keys must share one hash slot on a Redis Cluster, so there the tenant's
 * bookkeeping and the session's record (two slots, see {@link RedisKeys}) take a call each. One Redis (standalone,
 * Sentinel's master, a replicated master) holds every key, and one script does both: a request then costs three calls
 * instead of five.
 */
public enum RedisDeployment {
    /** One Redis holds every key: a script may touch the tenant's slot and the session's together. */
    SINGLE_NODE,
    /** A Redis Cluster: every script stays inside one slot. */
    CLUSTER;

    /** From the Redis client's {@code quarkus.redis.client-type}: {@code cluster}, or one node for any other. */
    public static RedisDeployment ofClientType(String clientType) {
        return "cluster".equals(clientType.trim().toLowerCase(Locale.ROOT)) ? CLUSTER : SINGLE_NODE;
    }
}
