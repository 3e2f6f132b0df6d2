package io.handoff.gateway.session.store;

import io.handoff.gateway.session.store.RedisPerEventLoop.Sharing;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RedisServer;
import io.netty.channel.EventLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.impl.ContextInternal;
import io.vertx.core.impl.VertxInternal;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store call made on an event loop goes over a connection of that loop's own, so its reply is read where it was
 * asked for, whether the loop shares one connection among its calls or pools them; the connection's id
 * ({@code CLIENT ID}) tells the connections apart.
 */
class RedisPerEventLoopTest {

    private static final int LOOPS = 3;
    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);

    private final MutableClock clock = new MutableClock();
    private RedisServer server;
    private Vertx vertx;
    private RedisPerEventLoop redis;
    private List<ContextInternal> loops;

    @BeforeEach
    void start() {
        server = RedisServer.startOnFreePort();
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(LOOPS));
        VertxInternal internal = (VertxInternal) vertx;
        loops = new ArrayList<>();
        internal.getEventLoopGroup().forEach(loop -> loops.add(
                internal.createEventLoopContext((EventLoop) loop, null, getClass().getClassLoader())));
    }

    private void open(Sharing sharing) {
        redis = new RedisPerEventLoop(vertx, new RedisOptions().setConnectionString(server.url()).setMaxPoolSize(4),
                sharing, clock, STORE_TIMEOUT);
    }

    @AfterEach
    void stop() throws Exception {
        if (redis != null) {
            redis.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        server.close();
    }

    @ParameterizedTest
    @EnumSource(Sharing.class)
    void eachEventLoopCallsOverItsOwnConnectionAndKeepsIt(Sharing sharing) throws Exception {
        open(sharing);
        assertEquals(LOOPS, redis.loops());
        List<Long> first = new ArrayList<>();
        for (ContextInternal loop : loops) {
            first.add(connectionIdSeenFrom(loop));
        }
        assertEquals(LOOPS, new HashSet<>(first).size(), "one connection per loop, each loop its own: " + first);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < LOOPS; i++) {
                assertEquals(first.get(i), connectionIdSeenFrom(loops.get(i)), "loop " + i + " kept its connection");
            }
        }
    }

    /** A connection's end reaches the loop that reads it: the loop whose call took it. */
    @ParameterizedTest
    @EnumSource(Sharing.class)
    void aLoopsConnectionIsReadByThatLoop(Sharing sharing) throws Exception {
        open(sharing);
        for (ContextInternal loop : loops) {
            CompletableFuture<Thread> askedOn = new CompletableFuture<>();
            CompletableFuture<Long> id = new CompletableFuture<>();
            CompletableFuture<Thread> endedOn = new CompletableFuture<>();
            loop.runOnContext(started -> {
                askedOn.complete(Thread.currentThread());
                redis.connect().onSuccess(connection -> {
                    connection.endHandler(ended -> endedOn.complete(Thread.currentThread()));
                    connection.send(Request.cmd(Command.CLIENT).arg("ID")).onSuccess(reply -> id.complete(reply.toLong()));
                });
            });
            assertEquals(":1", server.command("CLIENT KILL ID " + id.get(10, TimeUnit.SECONDS)));
            assertEquals(askedOn.get(10, TimeUnit.SECONDS), endedOn.get(10, TimeUnit.SECONDS));
        }
    }

    /**
     * gRPC's own callbacks run on an event loop's thread outside every Vert.x context; Vert.x then makes a context up
     * on a loop of its choosing, and a connection opened there answered on that other loop.
     */
    @ParameterizedTest
    @EnumSource(Sharing.class)
    void aCallMadeOnALoopsThreadOutsideItsContextsIsAnsweredOnThatLoop(Sharing sharing) throws Exception {
        open(sharing);
        for (int i = LOOPS - 1; i >= 0; i--) {
            EventLoop loop = loops.get(i).nettyEventLoop();
            CompletableFuture<Thread> answeredOn = new CompletableFuture<>();
            CompletableFuture<Thread> askedOn = new CompletableFuture<>();
            loop.execute(() -> {
                askedOn.complete(Thread.currentThread());
                redis.send(Request.cmd(Command.PING)).onComplete(reply -> answeredOn.complete(Thread.currentThread()));
            });
            assertEquals(askedOn.get(10, TimeUnit.SECONDS), answeredOn.get(10, TimeUnit.SECONDS), "loop " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(Sharing.class)
    void aCallFromOutsideEveryLoopJoinsTheLoopsConnectionsInTurn(Sharing sharing) throws Exception {
        open(sharing);
        Set<Long> ofTheLoops = new HashSet<>();
        for (ContextInternal loop : loops) {
            ofTheLoops.add(connectionIdSeenFrom(loop));
        }
        Set<Long> ofThisThread = new HashSet<>();
        for (int call = 0; call < 2 * LOOPS; call++) {
            ofThisThread.add(connectionId(redis.send(Request.cmd(Command.CLIENT).arg("ID"))));
        }
        assertEquals(ofTheLoops, ofThisThread, "every loop took its turn, and none opened a connection more");
    }

    @ParameterizedTest
    @EnumSource(Sharing.class)
    void closingClosesTheConnectionsOfEveryLoop(Sharing sharing) throws Exception {
        open(sharing);
        Set<Long> ids = new HashSet<>();
        for (ContextInternal loop : loops) {
            ids.add(connectionIdSeenFrom(loop));
        }
        assertTrue(ids.stream().allMatch(this::connected), "open before the close: " + server.reply("CLIENT", "LIST"));
        redis.close();
        await().atMost(10, TimeUnit.SECONDS).until(() -> ids.stream().noneMatch(this::connected));
    }

    /** Calls that overlap on one loop go over its one connection, in order: each gets its own reply. */
    @Test
    void callsThatOverlapOnALoopShareItsConnectionAndEachGetsItsOwnReply() throws Exception {
        open(Sharing.PIPELINED);
        int calls = 200;
        CompletableFuture<List<Future<Response>>> asked = new CompletableFuture<>();
        loops.get(1).runOnContext(started -> {
            List<Future<Response>> replies = new ArrayList<>();
            for (int call = 0; call < calls; call++) {
                replies.add(redis.send(call % 2 == 0 ? Request.cmd(Command.CLIENT).arg("ID")
                        : Request.cmd(Command.ECHO).arg("call " + call)));
            }
            asked.complete(replies);
        });
        List<Future<Response>> replies = asked.get(10, TimeUnit.SECONDS);
        Set<Long> connections = new HashSet<>();
        for (int call = 0; call < calls; call++) {
            Response reply = replies.get(call).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            if (call % 2 == 0) {
                connections.add(reply.toLong());
            } else {
                assertEquals("call " + call, reply.toString());
            }
        }
        assertEquals(1, connections.size(), "200 calls in flight at once, one connection: " + connections);
    }

    /** The calls a connection carried when it ended fail; the loop's next call opens another connection. */
    @Test
    void aLoopWhoseConnectionEndedOpensAnotherForItsNextCall() throws Exception {
        open(Sharing.PIPELINED);
        ContextInternal loop = loops.get(0);
        connectionIdSeenFrom(loop);
        server.freeze();
        Future<Response> carried;
        try {
            CompletableFuture<Future<Response>> inFlight = new CompletableFuture<>();
            loop.runOnContext(started -> inFlight.complete(redis.send(Request.cmd(Command.PING))));
            carried = inFlight.get(10, TimeUnit.SECONDS);
        } finally {
            server.kill();
        }
        server.start();
        await().atMost(10, TimeUnit.SECONDS).until(carried::failed);
        // the old connection is gone with the old server: a call that succeeds went over a new one
        await().atMost(10, TimeUnit.SECONDS).ignoreExceptions().until(() -> connectionIdSeenFrom(loop) > 0);
        long second = connectionIdSeenFrom(loop);
        assertEquals(second, connectionIdSeenFrom(loop), "the new connection is kept for the loop's later calls");
    }

    /**
     * A connection that owes a reply for longer than the store's timeout is closed and replaced, as when its peer
     * went silent without a reset: the call it carried fails, the loop's next call goes over a new connection.
     */
    @Test
    void aConnectionThatOwesAReplyPastTheStoresTimeoutIsReplaced() throws Exception {
        open(Sharing.PIPELINED);
        ContextInternal loop = loops.get(2);
        long first = connectionIdSeenFrom(loop);
        server.freeze();
        Future<Response> replaced;
        try {
            CompletableFuture<Future<Response>> inFlight = new CompletableFuture<>();
            loop.runOnContext(started -> inFlight.complete(redis.send(Request.cmd(Command.PING))));
            Future<Response> owed = inFlight.get(10, TimeUnit.SECONDS);
            clock.advance(STORE_TIMEOUT);
            CompletableFuture<Future<Response>> notYet = new CompletableFuture<>();
            loop.runOnContext(started -> notYet.complete(redis.send(Request.cmd(Command.CLIENT).arg("ID"))));
            Future<Response> sameConnection = notYet.get(10, TimeUnit.SECONDS);
            assertFalse(owed.isComplete(), "not stuck at the timeout itself: expiry is late, never early");
            clock.advance(Duration.ofMillis(1));
            CompletableFuture<Future<Response>> afterIt = new CompletableFuture<>();
            loop.runOnContext(started -> afterIt.complete(redis.send(Request.cmd(Command.CLIENT).arg("ID"))));
            replaced = afterIt.get(10, TimeUnit.SECONDS);
            // both calls it carried fail with it (each in its own task on the loop)
            await().atMost(10, TimeUnit.SECONDS).until(() -> owed.failed() && sameConnection.failed());
        } finally {
            server.thaw();
        }
        long second = connectionId(replaced);
        assertTrue(second > first, "a new connection: " + first + " then " + second);
        assertEquals(second, connectionIdSeenFrom(loop), "kept for the loop's later calls");
    }

    @Test
    void oneRedisServerSharesAConnectionPerLoopAndEveryOtherClientTypePools() {
        assertEquals(Sharing.PIPELINED, Sharing.ofClientType("standalone"));
        assertEquals(Sharing.PIPELINED, Sharing.ofClientType(" Standalone "));
        for (String pooled : List.of("sentinel", "replication", "cluster")) {
            assertEquals(Sharing.POOLED, Sharing.ofClientType(pooled), pooled);
        }
    }

    /** The id of the connection a call made on {@code loop} went over. */
    private long connectionIdSeenFrom(ContextInternal loop) throws Exception {
        CompletableFuture<Future<Response>> asked = new CompletableFuture<>();
        loop.runOnContext(started -> asked.complete(redis.send(Request.cmd(Command.CLIENT).arg("ID"))));
        return connectionId(asked.get(10, TimeUnit.SECONDS));
    }

    private static long connectionId(Future<Response> reply) throws Exception {
        return reply.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).toLong();
    }

    private boolean connected(long id) {
        return server.reply("CLIENT", "LIST").lines().anyMatch(line -> line.startsWith("id=" + id + " "));
    }
}
