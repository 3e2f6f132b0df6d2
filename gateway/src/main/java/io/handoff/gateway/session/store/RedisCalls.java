package io.handoff.gateway.session.store;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Every call the stores make to Redis: on a connection taken for that call and given back however the call ends (to
 * its loop's pool, or, where a loop's calls share one connection, to the loop's other calls; see
 * {@link RedisPerEventLoop}).
 *
 * <p>Why not the client's own {@code send} and {@code batch}: they give the connection back when the call's result
 * arrives, and not when the call throws instead. Vert.x's Redis Cluster connection throws (a NullPointerException)
 * when its slot map has no node for a key's slot, as it may for a moment during a failover; each such call kept a
 * pooled connection to every node, and once the pools had none left every later call waited for one until it timed
 * out, for as long as the gateway ran ({@code RedisClusterFailoverTest}). A caller that gives up does the same to a
 * connection it was still waiting for, unless the wait goes on without it ({@link #onItsOwnConnection}).
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

    /**
     * The connection is taken, and the call made on it, whatever becomes of the caller: a caller that gives up (its
     * client's deadline, the store's own timeout) would otherwise cancel the wait for a pooled connection, and the
     * connection the pool hands over later would reach nobody who gives it back. A call already sent runs to its
     * reply, then gives its connection back; its answer goes nowhere.
     */
    private static <T> Uni<T> onItsOwnConnection(Redis redis, Function<RedisConnection, Uni<T>> call) {
        return Uni.createFrom().emitter(caller -> {
            AtomicBoolean gaveUp = new AtomicBoolean();
            caller.onTermination(() -> gaveUp.set(true));
            redis.connect().subscribe().with(connection -> {
                if (gaveUp.get()) {
                    // Nobody waits for this call any more, so a close that fails has no one to be reported to.
                    connection.close().subscribe().with(closed -> {
                    }, failure -> {
                    });
                    return;
                }
                Uni.createFrom().deferred(() -> call.apply(connection)).eventually(connection::close)
                        .subscribe().with(caller::complete, caller::fail);
            }, caller::fail);
        });
    }
}
