package io.handoff.gateway.session.store;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.impl.ContextInternal;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.impl.PooledRedisConnection;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One event loop's Redis connection, shared by every call the loop makes ({@link RedisPerEventLoop.Sharing#PIPELINED}).
 * A call takes a {@link #lease()} and closes it when done; the connection stays open for the loop's next calls.
 *
 * <p>The loop replaces a connection that {@link #needsReplacing() needs replacing}: one that ended or failed, could not
 * be opened, or is stuck. Stuck means it has owed a reply, or been opening, for longer than the store's timeout
 * without a reply arriving: every call it carries has timed out for its caller by then, and a connection whose peer
 * went silent (a host gone without a reset, a network cut) would otherwise hold the loop's calls until TCP gives up,
 * minutes later. A stuck connection is closed: the calls it still carries fail. A replaced connection that merely
 * ended goes back to its client's pool, which drops it. Closing the client closes it.
 *
 * <p>Used on its loop's thread only, so it keeps no locks.
 */
final class SharedConnection {

    private final Clock clock;
    private final long stuckAfterMillis;
    private final Future<RedisConnection> opened;
    private final List<Handler<Void>> endHandlers = new ArrayList<>(1);
    private final List<Handler<Throwable>> exceptionHandlers = new ArrayList<>(1);
    private Lease lease;
    private boolean ended;
    /** Calls sent and not yet answered. */
    private int owed;
    /** When the connection last made progress: opened, or answered a call, or was sent a call while owing none. */
    private long progressAt;

    SharedConnection(Future<RedisConnection> opening, Clock clock, Duration stuckAfter) {
        this.clock = clock;
        this.stuckAfterMillis = stuckAfter.toMillis();
        this.progressAt = clock.millis();
        this.opened = opening.onSuccess(connection -> {
            lease = new Lease(connection);
            progressAt = clock.millis();
            connection.endHandler(end -> {
                ended = true;
                endHandlers.forEach(handler -> handler.handle(end));
            });
            connection.exceptionHandler(failure -> {
                ended = true;
                exceptionHandlers.forEach(handler -> handler.handle(failure));
                connection.close();
            });
            if (ended) {
                // replaced while it was opening
                closeNow(connection);
            }
        }).onFailure(failure -> ended = true);
    }

    /** Whether the loop's next call needs another connection; a stuck connection is closed here. */
    boolean needsReplacing() {
        if (ended) {
            return true;
        }
        boolean waiting = lease == null || owed > 0;
        if (waiting && clock.millis() - progressAt > stuckAfterMillis) {
            ended = true;
            if (lease != null) {
                closeNow(lease.connection);
            }
            return true;
        }
        return false;
    }

    /**
     * The connection for one call made in a context of this connection's loop, answered in the caller's context (a
     * request's own, which its trace and the rest of its work run in) rather than in the one the connection was opened
     * in.
     */
    Future<RedisConnection> lease() {
        ContextInternal caller = ContextInternal.current();
        if (lease != null) {
            return caller.succeededFuture(lease);
        }
        Promise<RedisConnection> leased = caller.promise();
        opened.<RedisConnection>map(connection -> lease).onComplete(leased);
        return leased.future();
    }

    /**
     * Closes the socket itself: given back to its pool, a connection that still looks valid would be handed out again.
     */
    private static void closeNow(RedisConnection connection) {
        if (connection instanceof PooledRedisConnection pooled) {
            pooled.actual().forceClose();
        } else {
            connection.close();
        }
    }

    private <T> Future<T> owing(Future<T> reply) {
        if (owed++ == 0) {
            progressAt = clock.millis();
        }
        return reply.onComplete(answered -> {
            owed--;
            progressAt = clock.millis();
        });
    }

    /**
     * The shared connection as one call sees it: closing it ends the call's use, not the connection, and the handlers
     * a call sets are kept until the connection ends. Redis's push messages belong to no single call, so a call may
     * not take them.
     */
    private final class Lease implements RedisConnection {

        private final RedisConnection connection;

        Lease(RedisConnection connection) {
            this.connection = connection;
        }

        @Override
        public Future<Response> send(Request request) {
            return owing(connection.send(request));
        }

        @Override
        public Future<List<Response>> batch(List<Request> requests) {
            return owing(connection.batch(requests));
        }

        @Override
        public Future<Void> close() {
            ContextInternal caller = ContextInternal.current();
            return caller == null ? Future.succeededFuture() : caller.succeededFuture();
        }

        @Override
        public boolean pendingQueueFull() {
            return connection.pendingQueueFull();
        }

        @Override
        public RedisConnection endHandler(Handler<Void> handler) {
            endHandlers.add(handler);
            return this;
        }

        @Override
        public RedisConnection exceptionHandler(Handler<Throwable> handler) {
            exceptionHandlers.add(handler);
            return this;
        }

        @Override
        public RedisConnection handler(Handler<Response> handler) {
            throw sharedStream();
        }

        @Override
        public RedisConnection pause() {
            throw sharedStream();
        }

        @Override
        public RedisConnection resume() {
            throw sharedStream();
        }

        @Override
        public RedisConnection fetch(long amount) {
            throw sharedStream();
        }

        private UnsupportedOperationException sharedStream() {
            return new UnsupportedOperationException(
                    "this Redis connection is shared by an event loop's calls: its push messages are no call's");
        }
    }
}
