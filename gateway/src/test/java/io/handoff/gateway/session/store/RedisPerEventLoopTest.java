package io.handoff.gateway.session.store;

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

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store call made on an event loop goes over a connection of that loop's own, so its reply is read where it was
 * asked for; the connection's id ({@code CLIENT ID}) tells the connections apart.
 */
class RedisPerEventLoopTest {

    private static final int LOOPS = 3;

    private RedisServer server;
    private Vertx vertx;
    private RedisPerEventLoop redis;
    private List<ContextInternal> loops;

    @BeforeEach
    void start() {
        server = RedisServer.startOnFreePort();
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(LOOPS));
        redis = new RedisPerEventLoop(vertx, new RedisOptions().setConnectionString(server.url()).setMaxPoolSize(4));
        VertxInternal internal = (VertxInternal) vertx;
        loops = new ArrayList<>();
        internal.getEventLoopGroup().forEach(loop -> loops.add(
                internal.createEventLoopContext((EventLoop) loop, null, getClass().getClassLoader())));
    }

    @AfterEach
    void stop() throws Exception {
        redis.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        server.close();
    }

    @Test
    void eachEventLoopCallsOverItsOwnConnectionAndKeepsIt() throws Exception {
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
    @Test
    void aLoopsConnectionIsReadByThatLoop() throws Exception {
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
    @Test
    void aCallMadeOnALoopsThreadOutsideItsContextsIsAnsweredOnThatLoop() throws Exception {
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

    @Test
    void aCallFromOutsideEveryLoopJoinsTheLoopsPoolsInTurn() throws Exception {
        Set<Long> ofTheLoops = new HashSet<>();
        for (ContextInternal loop : loops) {
            ofTheLoops.add(connectionIdSeenFrom(loop));
        }
        Set<Long> ofThisThread = new HashSet<>();
        for (int call = 0; call < 2 * LOOPS; call++) {
            ofThisThread.add(connectionId(redis.send(Request.cmd(Command.CLIENT).arg("ID"))));
        }
        assertEquals(ofTheLoops, ofThisThread, "every loop's pool took its turn, and none opened a connection more");
    }

    @Test
    void closingClosesTheConnectionsOfEveryLoop() throws Exception {
        Set<Long> ids = new HashSet<>();
        for (ContextInternal loop : loops) {
            ids.add(connectionIdSeenFrom(loop));
        }
        assertTrue(ids.stream().allMatch(this::connected), "open before the close: " + server.reply("CLIENT", "LIST"));
        redis.close();
        await().atMost(10, TimeUnit.SECONDS).until(() -> ids.stream().noneMatch(this::connected));
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
