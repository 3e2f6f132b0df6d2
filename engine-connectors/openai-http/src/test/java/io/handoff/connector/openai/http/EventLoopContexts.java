package io.handoff.connector.openai.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.VertxInternal;

import java.util.List;

/** Contexts on distinct event loops, for tests that start exchanges from a given loop. */
final class EventLoopContexts {

    private EventLoopContexts() {
    }

    /**
     * Two contexts on two different event loops. Not {@link Vertx#getOrCreateContext()}: off a Vert.x thread it
     * sticks to the calling thread and answers the same context every time.
     */
    static List<Context> two(Vertx vertx) {
        VertxInternal internal = (VertxInternal) vertx;
        // event loops are handed out round robin
        return List.of(internal.createEventLoopContext(), internal.createEventLoopContext());
    }
}
