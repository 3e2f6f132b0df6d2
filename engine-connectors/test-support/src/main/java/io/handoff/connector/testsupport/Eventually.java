package io.handoff.connector.testsupport;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for effects an engine or a connector applies on its own threads (a closed connection, a freed hold). */
public final class Eventually {

    /** Long enough for a loaded two-core machine; a condition that holds returns at its first check. */
    public static final Duration WAIT = Duration.ofSeconds(20);

    private Eventually() {
    }

    /** Polls {@code condition} until it holds; fails naming {@code what} once {@link #WAIT} has passed. */
    public static void eventually(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
