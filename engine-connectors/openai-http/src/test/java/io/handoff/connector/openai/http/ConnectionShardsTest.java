package io.handoff.connector.openai.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** How exchanges are spread over the lanes (one per event loop) and shards of one connector's connections. */
class ConnectionShardsTest {

    private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
    private final List<Integer> poolSizes = new ArrayList<>();

    @AfterEach
    void stop() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    private ConnectionShards shards(int maxConnections) {
        return new ConnectionShards(vertx, maxConnections, size -> {
            poolSizes.add(size);
            return vertx.createHttpClient();
        });
    }

    private List<Context> bothLoops() throws Exception {
        List<Context> loops = EventLoopContexts.two(vertx);
        assertNotEquals(threadOf(loops.get(0)), threadOf(loops.get(1)), "two contexts on two loops");
        return loops;
    }

    private static <T> T on(Context context, Supplier<T> action) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        context.runOnContext(v -> result.complete(action.get()));
        return result.get(10, TimeUnit.SECONDS);
    }

    private static Thread threadOf(Context context) throws Exception {
        return on(context, Thread::currentThread);
    }

    @Test
    void theLanesAndShardsAddUpToTheLimitExactly() {
        try (ConnectionShards s = shards(1024)) {
            assertEquals(2, s.lanes());
            assertEquals(16, s.shards(), "512 a lane, 8 shards of 64 each");
            assertEquals(1024, poolSizes.stream().mapToInt(Integer::intValue).sum());
        }
        poolSizes.clear();
        try (ConnectionShards s = shards(131)) {
            assertEquals(List.of(33, 33, 33, 32), poolSizes, "66 and 65, two shards a lane");
            assertEquals(List.of(0, 0, 1, 1), IntStream.range(0, 4).map(s::lane).boxed().toList());
            assertEquals(List.of(33, 33, 33, 32), IntStream.range(0, 4).map(s::capacity).boxed().toList());
        }
        poolSizes.clear();
        try (ConnectionShards s = shards(1)) {
            assertEquals(1, s.lanes(), "one connection: one lane, the other loop's exchanges go there");
            assertEquals(List.of(1), poolSizes);
        }
    }

    /** The context, of the two loops', whose exchanges take places in the lane {@code lane}. */
    private Context loopOfLane(ConnectionShards s, int lane) throws Exception {
        for (Context loop : bothLoops()) {
            int shard = on(loop, s::acquire);
            s.release(shard);
            if (s.lane(shard) == lane) {
                return loop;
            }
        }
        throw new AssertionError("no loop's exchanges take places in lane " + lane);
    }

    @Test
    void anExchangeTakesThePlaceOfItsOwnEventLoopsLane() throws Exception {
        List<Context> loops = bothLoops();
        try (ConnectionShards s = shards(1024)) {
            List<Integer> lanes = new ArrayList<>();
            for (Context loop : loops) {
                int shard = on(loop, s::acquire);
                s.release(shard);
                lanes.add(s.lane(shard));
                CompletableFuture<Thread> ranOn = new CompletableFuture<>();
                s.execute(shard, () -> ranOn.complete(Thread.currentThread()));
                assertEquals(threadOf(loop), ranOn.get(10, TimeUnit.SECONDS), "the lane is the loop's own");
            }
            assertEquals(List.of(0, 1), lanes.stream().sorted().toList(), "each loop has a lane of its own");
            for (int i = 0; i < 10; i++) {
                for (Context loop : loops) {
                    int shard = on(loop, s::acquire);
                    assertEquals(s.lane(shard) == 0 ? 0 : 8, shard, "a light load stays in its lane's first shard");
                    s.release(shard);
                }
            }
            assertEquals(0, s.acquire(), "off every loop: the first lane's first shard");
        }
    }

    @Test
    void aFullLaneOverflowsToTheOthersInOrderAndAFreedPlaceIsTakenFirst() throws Exception {
        try (ConnectionShards s = shards(132)) {
            Context second = loopOfLane(s, 1);
            List<Integer> taken = on(second, () -> IntStream.range(0, 132).map(i -> s.acquire()).boxed().toList());
            assertEquals(List.of(2, 3, 3), taken.subList(32, 35), "the second lane's shards fill first, in order");
            assertEquals(66, taken.stream().filter(x -> s.lane(x) == 1).count());
            assertEquals(0, taken.get(66), "then the first lane's");
            assertEquals(1, taken.get(131));
            s.release(3);
            s.release(0);
            assertEquals(3, on(second, s::acquire), "its own lane first");
            assertEquals(0, on(second, s::acquire));
        }
    }

    @Test
    void withEveryShardFullTheOneLeastOverItsCapacityTakesTheExchangeItsOwnLaneFirst() throws Exception {
        try (ConnectionShards s = shards(132)) {
            Context second = loopOfLane(s, 1);
            IntStream.range(0, 132).forEach(i -> s.acquire());
            assertEquals(2, on(second, s::acquire), "every shard at its capacity: its own lane's first");
            assertEquals(3, on(second, s::acquire), "shard 2 is now over by one");
            assertEquals(0, on(second, s::acquire), "its lane's shards are over by one: the first lane's");
            assertEquals(1, s.acquire(), "off every loop: the first of those least over");
            assertEquals(List.of(34, 34, 34, 34), IntStream.range(0, 4).map(s::inFlight).boxed().toList());
        }
    }

    @Test
    void anExchangeStartsOnItsLanesLoopAtOnceWhenAlreadyThere() throws Exception {
        try (ConnectionShards s = shards(1024)) {
            Context second = loopOfLane(s, 1);
            assertEquals(threadOf(second), startedOn(s, 8, second, true), "on the lane's own loop: at once");
            assertEquals(threadOf(second), startedOn(s, 8, loopOfLane(s, 0), false),
                    "on another loop: as a task of the lane's loop");
        }
    }

    /**
     * The thread that ran the task {@code execute} was given on {@code caller}, having checked whether it ran on the
     * caller's thread before {@code execute} returned (another loop may run it at any time, so its having run is
     * not enough).
     */
    private static Thread startedOn(ConnectionShards s, int shard, Context caller, boolean atOnce) throws Exception {
        CompletableFuture<Thread> ranOn = new CompletableFuture<>();
        boolean ranHereAtOnce = on(caller, () -> {
            s.execute(shard, () -> ranOn.complete(Thread.currentThread()));
            return ranOn.getNow(null) == Thread.currentThread();
        });
        assertEquals(atOnce, ranHereAtOnce, "ran at once on the caller's thread");
        return ranOn.get(10, TimeUnit.SECONDS);
    }
}
