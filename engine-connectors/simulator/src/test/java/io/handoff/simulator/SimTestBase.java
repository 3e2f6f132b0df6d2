package io.handoff.simulator;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** Starts engines on a shared Vert.x with random free ports and stops them after each test. */
public abstract class SimTestBase {
    protected static Vertx vertx;
    private final List<SimEngine> started = new ArrayList<>();

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @AfterEach
    void stopEngines() {
        for (SimEngine e : started) {
            try {
                e.stopBlocking();
            } catch (RuntimeException ignored) {
                // a crashed engine may already be closed
            }
        }
        started.clear();
    }

    protected <E extends SimEngine> E start(E engine) {
        started.add(engine);
        return engine.startBlocking(vertx);
    }

    /**
     * Polls until the engine's client cancels by phase are these: during the prefill, before the first token,
     * mid-stream. A cancel counted in the wrong phase never reaches them.
     */
    protected static void awaitCancels(SimEngine e, long duringPrefill, long beforeFirstToken, long midStream) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
            .untilAsserted(() -> assertEquals(List.of(duringPrefill, beforeFirstToken, midStream), List.of(
                e.stat(EngineStats.CANCELLED_DURING_PREFILL), e.stat(EngineStats.CANCELLED_BEFORE_FIRST_TOKEN),
                e.stat(EngineStats.CANCELLED_MID_STREAM)), "cancels: during prefill, before first token, mid-stream"));
    }

    /** Polls until the engine's stat has the value (no long sleeps). */
    protected static void awaitStat(SimEngine e, String stat, long value) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
            .until(() -> e.stat(stat) == value);
    }
}
