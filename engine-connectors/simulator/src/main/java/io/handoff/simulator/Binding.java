package io.handoff.simulator;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.net.BindException;
import java.util.function.Supplier;

/**
 * Binding a port that was just released. A restarted engine listens again on the ports it had, so that its peers find
 * it where they knew it; the kernel may still refuse such a port for a moment (a listener whose close has not
 * finished, a short-lived socket of another process that took the number meanwhile). A bounded number of retries
 * makes the restart deterministic without hiding a port that stays taken: that still fails, with the bind error.
 */
final class Binding {
    static final int ATTEMPTS = 200;
    static final long PAUSE_MS = 25;

    private Binding() {
    }

    /** Runs {@code bind} until it succeeds, fails with something other than a bind error, or runs out of attempts. */
    static Future<Void> retried(Vertx vertx, Supplier<Future<Void>> bind) {
        return retried(vertx, ATTEMPTS, bind);
    }

    static Future<Void> retried(Vertx vertx, int attempts, Supplier<Future<Void>> bind) {
        Promise<Void> done = Promise.promise();
        attempt(vertx, bind, 1, attempts, done);
        return done.future();
    }

    private static void attempt(Vertx vertx, Supplier<Future<Void>> bind, int n, int attempts, Promise<Void> done) {
        bind.get().onComplete(ar -> {
            if (ar.succeeded()) {
                done.complete();
            } else if (isBindError(ar.cause()) && n < attempts) {
                vertx.setTimer(PAUSE_MS, t -> attempt(vertx, bind, n + 1, attempts, done));
            } else {
                done.fail(ar.cause());
            }
        });
    }

    static boolean isBindError(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof BindException) {
                return true;
            }
        }
        return false;
    }
}
