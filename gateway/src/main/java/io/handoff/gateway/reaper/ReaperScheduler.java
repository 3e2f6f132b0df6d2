package io.handoff.gateway.reaper;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicBoolean;

/** Runs the reaper every {@code handoff.reaper.period}, never two sweeps of this replica at once. */
@ApplicationScoped
public class ReaperScheduler {

    private static final Logger LOG = Logger.getLogger(ReaperScheduler.class);

    private final Reaper reaper;
    private final ReaperConfig config;
    private final Vertx vertx;
    private final AtomicBoolean sweeping = new AtomicBoolean();
    private long timer = -1;

    public ReaperScheduler(Reaper reaper, ReaperConfig config, Vertx vertx) {
        this.reaper = reaper;
        this.config = config;
        this.vertx = vertx;
    }

    void start(@Observes StartupEvent event) {
        if (!config.enabled()) {
            LOG.info("reaper disabled on this replica (handoff.reaper.enabled=false)");
            return;
        }
        timer = vertx.setPeriodic(config.period().toMillis(), id -> tick());
    }

    void stop(@Observes ShutdownEvent event) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void tick() {
        if (!sweeping.compareAndSet(false, true)) {
            return;
        }
        reaper.sweep().subscribe().with(
                report -> sweeping.set(false),
                failure -> {
                    sweeping.set(false);
                    LOG.warnf("reaper sweep failed: %s", failure.getMessage());
                });
    }
}
