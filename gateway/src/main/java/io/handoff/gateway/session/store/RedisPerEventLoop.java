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

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A Redis client that keeps its connections apart per Vert.x event loop: a call made on an event loop goes over a
 * connection of that loop's own, which the loop opened and reads, so neither the call nor its reply crosses to another
 * loop.
 *
 * <p><b>Why per loop.</b> Vert.x's Redis client (4.5) opens every connection of its pool on the event loop of the
 * context the client was made in, whichever loop asks: one loop for the whole gateway. A connection hands every reply
 * over to the caller's loop: a wake-up of another thread each way when the loops sleep, a queued task each under load.
 * Once the engines' connections were kept per loop, the store's calls were the last crossings between the gateway's
 * loops, about 4.6 wake-ups a request (docs/benchmarks.md, "Session 35"); {@code ConnectionShards} keeps the engines'
 * connections the same way.
 *
 * <p><b>{@link Sharing#PIPELINED}: one connection per loop.</b> Every call of a loop goes over the loop's one
 * connection, the calls' commands in the order they were sent and their replies in the same order (Redis answers each
 * connection in order). Calls that overlap then share Redis's reads and writes: Redis reads the commands that have
 * arrived in one read and answers them in one write, and the loop reads their replies in one read, where a connection
 * per call cost a read and a write on each side for each call (docs/benchmarks.md, "Session 40"). The connection is
 * opened in the loop's context when the loop first calls, and again after it ends, fails, or is stuck (owes a reply
 * for longer than the store's timeout): the calls it carried then fail, later ones go over the new one. Only for one
 * Redis server ({@code quarkus.redis.client-type=standalone}): a Sentinel's or a replicated deployment's connection
 * must follow its master, and a Cluster's its slots, which their pools do. No call may block its connection (no
 * {@code BLPOP}, no {@code SUBSCRIBE}): the store sends none.
 *
 * <p><b>{@link Sharing#POOLED}: a pool per loop.</b> Each loop has a client of its own, made with the options Quarkus
 * built from {@code quarkus.redis.*} (endpoints, credentials, TLS, the pool's sizes), so each loop's pool holds up to
 * {@code quarkus.redis.max-pool-size} connections, one per call in flight. A pool opens connections only as its loop's
 * calls overlap: a loop that makes no calls holds none.
 *
 * <p>Either way, a call made off every loop (a worker thread, a test's thread) is started on the loops in turn, and a
 * call made on a loop's thread but outside its contexts, as gRPC's own callbacks are, is started in that loop's
 * context: Vert.x would otherwise make a context up on a loop of its choosing and hand every answer over to it.
 */
final class RedisPerEventLoop implements Redis {

    /** How a loop's calls take their connections. */
    enum Sharing {
        /** One connection per loop, shared by the loop's calls: for one Redis server. */
        PIPELINED,
        /** A pool per loop, a connection per call in flight: for Sentinel, replication and Cluster clients. */
        POOLED;

        /** From {@code quarkus.redis.client-type}: pipelined for {@code standalone}, pooled for every other. */
        static Sharing ofClientType(String clientType) {
            return "standalone".equals(clientType.trim().toLowerCase(Locale.ROOT)) ? PIPELINED : POOLED;
        }
    }

    private final ContextInternal[] loops;
    private final Redis[] clients;
    private final Sharing sharing;
    private final Clock clock;
    private final Duration stuckAfter;
    /** Each loop's shared connection ({@link Sharing#PIPELINED}), read and written on that loop's thread only. */
    private final SharedConnection[] shared;
    private final AtomicInteger nextForOtherThreads = new AtomicInteger();

    /**
     * @param stuckAfter how long a loop's shared connection may owe a reply, or take to open, before the loop replaces
     *                   it (the store's timeout: its calls have all failed by then; see {@link SharedConnection})
     */
    RedisPerEventLoop(Vertx vertx, RedisOptions options, Sharing sharing, Clock clock, Duration stuckAfter) {
        this.sharing = sharing;
        this.clock = clock;
        this.stuckAfter = stuckAfter;
        VertxInternal internal = (VertxInternal) vertx;
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader();
        List<ContextInternal> contexts = new ArrayList<>();
        internal.getEventLoopGroup().forEach(executor -> contexts.add(
                internal.createEventLoopContext((EventLoop) executor, null, classLoader)));
        this.loops = contexts.toArray(ContextInternal[]::new);
        this.clients = new Redis[loops.length];
        this.shared = new SharedConnection[loops.length];
        for (int loop = 0; loop < loops.length; loop++) {
            // Vert.x's Redis client opens every connection on the loop of the context it was made in.
            int made = loop;
            loops[loop].dispatch(inItsContext -> clients[made] = Redis.createClient(vertx, new RedisOptions(options)));
        }
    }

    /** How many event loops this client keeps connections for. */
    int loops() {
        return loops.length;
    }

    Sharing sharing() {
        return sharing;
    }

    @Override
    public Future<RedisConnection> connect() {
        for (int loop = 0; loop < loops.length; loop++) {
            EventLoop own = loops[loop].nettyEventLoop();
            if (own.inEventLoop()) {
                ContextInternal current = ContextInternal.current();
                if (current != null && current.nettyEventLoop() == own) {
                    return connectOn(loop);
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
        Handler<Void> connect = started -> connectOn(loop).onComplete(connected);
        if (onItsThread) {
            loops[loop].emit(connect);
        } else {
            loops[loop].runOnContext(connect);
        }
        return connected.future();
    }

    /** A connection for a call made in {@code loop}'s context, on its thread. */
    private Future<RedisConnection> connectOn(int loop) {
        if (sharing == Sharing.POOLED) {
            return clients[loop].connect();
        }
        SharedConnection connection = shared[loop];
        if (connection == null || connection.needsReplacing()) {
            connection = new SharedConnection(clients[loop].connect(), clock, stuckAfter);
            shared[loop] = connection;
        }
        return connection.lease();
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

    /** Closes every loop's client, and with it every connection its pool opened, a loop's shared one too. */
    @Override
    public void close() {
        for (Redis client : clients) {
            client.close();
        }
    }
}
