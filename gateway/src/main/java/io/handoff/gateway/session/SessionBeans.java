package io.handoff.gateway.session;

import io.handoff.gateway.runtime.ReplicaIdentity;
import io.handoff.gateway.session.store.RateLimitStore;
import io.handoff.gateway.session.store.SessionStore;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Clock;

/** Wires the session service from configuration, and its metrics onto the application's registry. */
@ApplicationScoped
public class SessionBeans {

    @Produces
    @Singleton
    SessionPolicy sessionPolicy(SessionConfig config) {
        return config.toPolicy();
    }

    @Produces
    @Singleton
    SessionMetrics sessionMetrics(MeterRegistry registry) {
        return new SessionMetrics(registry);
    }

    @Produces
    @Singleton
    TenantRateLimits tenantRateLimits(RateLimitConfig config, RateLimitStore store, Clock clock,
            MeterRegistry registry) {
        return new TenantRateLimits(config, store, clock, registry);
    }

    @Produces
    @Singleton
    SessionService sessionService(SessionStore store, SessionPolicy policy, Clock clock, SessionMetrics metrics,
            CleanupHandoff cleanup, ReplicaIdentity replica, TenantRateLimits limits) {
        return new SessionService(store, policy, clock, metrics, cleanup, replica.id(), cleanup.claimTtl(), limits);
    }
}
