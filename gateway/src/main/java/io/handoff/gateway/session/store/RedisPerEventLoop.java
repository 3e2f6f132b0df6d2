package io.handoff.gateway.session.store;

import io.netty.channel.EventLoop;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import io.vertx.core.impl.VertxInternal;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A Redis client that keeps its connections apart per Vert.x event loop: a call made on an event loop takes one of
 * that loop's own connections, which the loop opened and reads, so neither the call nor its reply crosses to another
 * loop.
 *
 * <p><b>Why.</b> Vert.x's Redis client (4.5) opens every connection of its pool on the event loop of the context the
 * client was made in, whichever loop asks: one loop for the whole gateway. A connection hands every reply over to
 * the caller's loop: a wake-up of another thread each way when the loops sleep, a queued task each under load. Once
 * the engines' connections were kept per loop, the store's calls were the last crossings between the gateway's loops,
 * about 4.6 wake-ups a request (docs/benchmarks.md, "Session 35"); {@code ConnectionShards} keeps the engines'
 * connections the same way.
 *
 * <p><b>Pools.</b> Each loop has a client of its own, made with the options Quarkus built from {@code quarkus.redis.*}
 * (endpoints, credentials, TLS, the pool's sizes), so each loop's pool holds up to {@code quarkus.redis.max-pool-size}
 * connections. A pool opens connections only as its loop's calls overlap: a loop that makes no calls holds none, and
 * one busy loop (the gRPC listener's) may use the whole size. A call made off every loop (a worker thread, a test's
 * thread) is started on the loops in turn. A call made on a loop's thread but outside its contexts, as gRPC's own
 * callbacks are, is started in that loop's context: Vert.x would otherwise make a context up on a loop of its
 * choosing and hand every answer over to it.
 */
final class RedisPerEventLoop implements Redis {

    private final ContextInternal[] loops;
    private final Redis[] clients;
    private final AtomicInteger nextForOtherThreads = new AtomicInteger();

    RedisPerEventLoop(Vertx vertx, RedisOptions options) {
        VertxInternal internal = (VertxInternal) vertx;
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader();
        List<ContextInternal> contexts = new ArrayList<>();
        internal.getEventLoopGroup().forEach(executor -> contexts.add(
                internal.createEventLoopContext((EventLoop) executor, null, classLoader)));
        this.loops = contexts.toArray(ContextInternal[]::new);
        this.clients = new Redis[loops.length];
        for (int loop = 0; loop < loops.length; loop++) {
            // Vert.x's Redis client opens every connection on the loop of the context it was made in.
            int made = loop;
            loops[loop].dispatch(inItsContext -> clients[made] = Redis.createClient(vertx, new RedisOptions(options)));
        }
    }

    /** How many event loops, and so pools, this client keeps connections for. */
    int loops() {
        return loops.length;
    }

    @Override
    public Future<RedisConnection> connect() {
        for (int loop = 0; loop < loops.length; loop++) {
            EventLoop own = loops[loop].nettyEventLoop();
            if (own.inEventLoop()) {
                ContextInternal current = ContextInternal.current();
                if (current != null && current.nettyEventLoop() == own) {
                    return clients[loop].connect();
                }
                // On this loop's thread but in none of its contexts (gRPC's own callbacks): Vert.x would make a
                // context up on a loop of its choosing and hand the connection's answers over to it.
                return connectIn(loop, true);
            }
        }
        return connectIn(Math.floorMod(nextForOtherThreads.getAndIncrement(), loops.length), false);
    }

    /**
     * Connects in the loop's own context, so that the connection's answers come back in it rather than in a context
     * Vert.x makes up: at once when called on that loop's thread, else as a task of the loop.
     */
    private Future<RedisConnection> connectIn(int loop, boolean onItsThread) {
        Promise<RedisConnection> connected = loops[loop].promise();
        Handler<Void> connect = started -> clients[loop].connect().onComplete(connected);
        if (onItsThread) {
            loops[loop].emit(connect);
        } else {
            loops[loop].runOnContext(connect);
        }
        return connected.future();
    }

    @Override
    public Future<Response> send(Request request) {
        return onItsOwnConnection(connection -> connection.send(request));
    }

    @Override
    public Future<List<Response>> batch(List<Request> requests) {
        return onItsOwnConnection(connection -> connection.batch(requests));
    }

    private <T> Future<T> onItsOwnConnection(Function<RedisConnection, Future<T>> call) {
        return connect().compose(connection -> call.apply(connection).eventually(given -> connection.close()));
    }

    @Override
    public void close() {
        for (Redis client : clients) {
            client.close();
        }
    }
}
