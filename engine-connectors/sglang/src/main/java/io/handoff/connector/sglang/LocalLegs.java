package io.handoff.connector.sglang;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The legs running in this process, by rid: an abort cancels a leg's exchange here, and fails it with CANCELLED, as
 * well as posting {@code /abort_request} to the engine.
 */
final class LocalLegs {

    private final Map<String, Runnable> running = new ConcurrentHashMap<>();

    /** The call as a leg that {@link #abort} can stop while it runs. */
    <T> Uni<T> abortable(String rid, Uni<T> call) {
        return Uni.createFrom().emitter(em -> track(rid, em::fail, em::onTermination)
                .set(call.subscribe().with(em::complete, em::fail)));
    }

    /** The stream as a leg that {@link #abort} can stop while it runs. */
    <T> Multi<T> abortable(String rid, Multi<T> stream) {
        return Multi.createFrom().emitter(em -> track(rid, em::fail, em::onTermination)
                .set(stream.subscribe().with(em::emit, em::fail, em::complete)));
    }

    /** Cancels the leg's exchange and fails it with CANCELLED, if it runs here. */
    void abort(String rid) {
        Runnable local = running.get(rid);
        if (local != null) {
            local.run();
        }
    }

    /**
     * Registers a leg until it ends, however it ends; answers where the leg's subscription to its exchange goes, to
     * be cancelled by an abort or by the leg's own end.
     */
    private AtomicReference<Cancellable> track(String rid, Consumer<Throwable> fail, Consumer<Runnable> onTermination) {
        AtomicReference<Cancellable> inner = new AtomicReference<>();
        Runnable abort = () -> {
            cancel(inner);
            fail.accept(aborted(rid));
        };
        running.put(rid, abort);
        onTermination.accept(() -> {
            running.remove(rid, abort);
            cancel(inner);
        });
        return inner;
    }

    private static void cancel(AtomicReference<Cancellable> inner) {
        Cancellable c = inner.get();
        if (c != null) {
            c.cancel();
        }
    }

    private static EngineException aborted(String rid) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED, "leg " + rid + " aborted");
    }
}
