package io.handoff.gateway.reaper;

import io.handoff.gateway.runtime.ReplicaIdentity;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.telemetry.HandoffTracing;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Clock;

/** Wires the reaper and the cleanup executor from configuration. */
@ApplicationScoped
public class ReaperBeans {

    @Produces
    @Singleton
    CleanupExecutor cleanupExecutor(SessionStore store, CleanupPort port, Clock clock, SessionMetrics metrics,
            ReaperConfig config, HandoffTracing tracing) {
        return new CleanupExecutor(store, port, clock, metrics, config.maxAttempts(), config.retryBackoff(),
                config.claimTtl(), tracing);
    }

    @Produces
    @Singleton
    Reaper reaper(SessionStore store, CleanupExecutor cleanup, Clock clock, SessionMetrics metrics,
            ReplicaIdentity replica, ReaperConfig config, HandoffTracing tracing) {
        return new Reaper(store, cleanup, clock, metrics, replica.id(), config.claimTtl(), config.batchSize(),
                tracing);
    }
}
