package io.handoff.chaos;

import java.io.IOException;
import java.util.Map;

/**
 * The Redis every replica shares, as the replicas are told of it and as the faults that every topology has reach it:
 * one {@link RedisNode}, or a {@link RedisClusterNodes} of three masters with a replica each.
 */
interface RedisStore {

    /** The environment a replica gets, as README has an operator give it: {@code HANDOFF_REDIS_URL}, and the client. */
    Map<String, String> gatewayEnvironment();

    /** Empties the store under load: every key and every loaded script gone, every process and port unchanged. */
    void wipe() throws IOException;

    /** Stops every process of the store, whatever state a fault left it in. */
    void stop();
}
