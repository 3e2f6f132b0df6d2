package io.handoff.connector.openai.http;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How exchanges are spread over the shards of one connector's connections. */
class ConnectionShardsTest {

    private final Vertx vertx = Vertx.vertx();
    private final List<Integer> poolSizes = new ArrayList<>();

    @AfterEach
    void stop() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    private ConnectionShards shards(int maxConnections) {
        return new ConnectionShards(maxConnections, size -> {
            poolSizes.add(size);
            return vertx.createHttpClient();
        });
    }

    @Test
    void theShardsAddUpToTheLimitExactly() {
        try (ConnectionShards s = shards(1024)) {
            assertEquals(16, s.shards());
            assertEquals(1024, poolSizes.stream().mapToInt(Integer::intValue).sum());
        }
        poolSizes.clear();
        try (ConnectionShards s = shards(130)) {
            assertEquals(3, s.shards());
            assertEquals(List.of(44, 43, 43), poolSizes);
            assertEquals(List.of(44, 43, 43), IntStream.range(0, 3).map(s::capacity).boxed().toList());
        }
        poolSizes.clear();
        try (ConnectionShards s = shards(1)) {
            assertEquals(List.of(1), poolSizes);
        }
    }

    @Test
    void aLightLoadStaysInTheFirstShard() {
        try (ConnectionShards s = shards(1024)) {
            for (int i = 0; i < 100; i++) {
                int shard = s.acquire();
                assertEquals(0, shard);
                s.release(shard);
            }
        }
    }

    @Test
    void shardsFillInOrderAndAFreedPlaceIsTakenFirst() {
        try (ConnectionShards s = shards(130)) {
            List<Integer> taken = IntStream.range(0, 130).map(i -> s.acquire()).boxed().toList();
            assertEquals(44, taken.stream().filter(x -> x == 0).count());
            assertEquals(43, taken.stream().filter(x -> x == 1).count());
            assertEquals(43, taken.stream().filter(x -> x == 2).count());
            assertEquals(2, taken.get(129));
            s.release(1);
            assertEquals(1, s.acquire());
        }
    }

    @Test
    void withEveryShardFullTheOneLeastOverItsCapacityTakesTheExchange() {
        try (ConnectionShards s = shards(130)) {
            IntStream.range(0, 130).forEach(i -> s.acquire());
            assertEquals(0, s.acquire(), "every shard at its capacity: the first");
            assertEquals(1, s.acquire(), "shard 0 is now over by one");
            assertEquals(2, s.acquire());
            assertEquals(45, s.inFlight(0));
            assertEquals(44, s.inFlight(1));
            assertEquals(44, s.inFlight(2));
        }
    }
}
