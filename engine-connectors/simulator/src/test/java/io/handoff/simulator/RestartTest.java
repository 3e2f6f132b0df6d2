package io.handoff.simulator;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A crashed engine comes back on the ports it had, every time: the restart waits for the crash's listeners to close
 * and rides out a port the kernel still refuses for a moment.
 */
class RestartTest extends SimTestBase {

    private static final int ROUNDS = 25;

    @ParameterizedTest
    @EnumSource(Family.class)
    void crashAndRestartAtOnceRebindsEveryPortEachTime(Family family) {
        EngineConfig c = Engines.config(family);
        c.model = "m";
        SimEngine e = start(Engines.create(c));
        JsonNode first = e.stats();
        for (int i = 1; i <= ROUNDS; i++) {
            e.crash(-1); // no pause: the listeners are still closing when the restart begins
            e.restart();
            JsonNode now = SimHttp.get(e.baseUrl() + "/sim/stats").json;
            assertEquals(first.path("port").asInt(), now.path("port").asInt());
            first.fieldNames().forEachRemaining(name -> {
                if (name.endsWith("_port")) {
                    assertEquals(first.path(name).asInt(), now.path(name).asInt(), name);
                }
            });
            assertEquals(i, now.path("restarts").asInt());
            assertTrue(now.path("up").asBoolean());
        }
    }

    @Test
    void aPortHeldByAnotherSocketForAMomentIsBoundOnceReleased() throws Exception {
        EngineConfig c = Engines.config(Family.VLLM);
        c.model = "m";
        SimEngine e = start(Engines.create(c));
        int port = e.port();
        e.crash(-1);
        awaitClosed(port);
        CompletableFuture<Void> restarted;
        try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            restarted = CompletableFuture.runAsync(e::restart);
            // the restart keeps trying while the port is taken
            assertThrows(TimeoutException.class, () -> restarted.get(300, TimeUnit.MILLISECONDS));
        }
        restarted.get(10, TimeUnit.SECONDS);
        assertEquals(port, e.port());
        assertEquals(200, SimHttp.get(e.baseUrl() + "/health").status);
    }

    @Test
    void bindingRetriesOnlyBindErrorsAndOnlyABoundedNumberOfTimes() {
        AtomicInteger calls = new AtomicInteger();
        Binding.retried(vertx, 10, () -> calls.incrementAndGet() < 4
                ? Future.failedFuture(new BindException("Address already in use")) : Future.succeededFuture())
            .toCompletionStage().toCompletableFuture().join();
        assertEquals(4, calls.get());

        calls.set(0);
        Throwable other = assertThrows(Exception.class, () -> Binding.retried(vertx, 10, () -> {
            calls.incrementAndGet();
            return Future.<Void>failedFuture(new IllegalStateException("not a bind error"));
        }).toCompletionStage().toCompletableFuture().join());
        assertEquals(1, calls.get(), other.toString());

        calls.set(0);
        Throwable taken = assertThrows(Exception.class, () -> Binding.retried(vertx, 3, () -> {
            calls.incrementAndGet();
            return Future.<Void>failedFuture(new BindException("Address already in use"));
        }).toCompletionStage().toCompletableFuture().join());
        assertEquals(3, calls.get());
        assertTrue(Binding.isBindError(taken), taken.toString());
    }

    private static void awaitClosed(int port) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return true;
            } catch (IOException taken) {
                return false;
            }
        });
    }
}
