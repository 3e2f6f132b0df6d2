package io.handoff.gateway.session.store;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

import java.util.List;
import java.util.function.Function;

/**
 * Every call the stores make to Redis: on a connection taken from the client's pool for that call and given back
 * however the call ends.
 *
 * <p>Why not the client's own {@code send} and {@code batch}: they give the connection back when the call's result
 * arrives, and not when the call throws instead. Vert.x's Redis Cluster connection throws (a NullPointerException)
 * when its slot map has no node for a key's slot, as it may for a moment during a failover; each such call kept a
 * pooled connection to every node, and once the pools had none left every later call waited for one until it timed
 * out, for as long as the gateway ran ({@code RedisClusterFailoverTest}).
 */
final class RedisCalls {

    private RedisCalls() {
    }

    static Uni<Response> send(Redis redis, Request request) {
        return onItsOwnConnection(redis, connection -> connection.send(request));
    }

    /** The commands in one write, their replies in order (pipelined: one round trip for all). */
    static Uni<List<Response>> batch(Redis redis, List<Request> requests) {
        return onItsOwnConnection(redis, connection -> connection.batch(requests));
    }

    private static <T> Uni<T> onItsOwnConnection(Redis redis, Function<RedisConnection, Uni<T>> call) {
        return redis.connect().flatMap(connection -> Uni.createFrom().deferred(() -> call.apply(connection))
                .eventually(connection::close));
    }
}
