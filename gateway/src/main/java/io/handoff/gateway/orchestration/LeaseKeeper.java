package io.handoff.gateway.orchestration;

import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionService;
import io.quarkus.runtime.Startup;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Renews the leases of the sessions whose legs run on this replica, once a third of a lease has passed, so that a
 * long decode is never reaped while its owner lives. When this replica dies the renewals stop, the lease runs out and
 * another replica's reaper cleans up. A renewal refused because the session ended elsewhere (aborted, expired)
 * tells the request's run, which stops its legs.
 */
@Startup
@ApplicationScoped
public class LeaseKeeper {

    private static final Logger LOG = Logger.getLogger(LeaseKeeper.class);

    private final SessionService sessions;
    private final Clock clock;
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    private final Vertx vertx;
    private final long timer;

    public LeaseKeeper(SessionService sessions, Clock clock, Vertx vertx, OrchestrationConfig config) {
        this.sessions = sessions;
        this.clock = clock;
        this.vertx = vertx;
        this.timer = config.keepaliveEnabled()
                ? vertx.setPeriodic(config.keepaliveTick().toMillis(), id -> tick())
                : -1;
    }

    private static final class Kept {
        final String tenant;
        final Duration lease;
        /** A third of the lease, worked out once: a tick looks at every kept session, and most are not due. */
        final Duration renewEvery;
        final Consumer<String> onLost;
        volatile Instant renewDue;
        volatile boolean renewing;

        Kept(String tenant, Duration lease, Instant renewedAt, Consumer<String> onLost) {
            this.tenant = tenant;
            this.lease = lease;
            this.renewEvery = lease.dividedBy(3);
            this.renewDue = renewedAt.plus(renewEvery);
            this.onLost = onLost;
        }
    }

    /** Starts keeping a session alive; {@code onLost} is told why if the session ends under it. */
    public void keep(String tenant, String sessionId, Duration lease, Consumer<String> onLost) {
        kept.put(sessionId, new Kept(tenant, lease, clock.instant(), onLost));
    }

    public void forget(String sessionId) {
        kept.remove(sessionId);
    }

    public int size() {
        return kept.size();
    }

    /** Renews every kept lease that is a third or more through; never more than one renewal per session at once. */
    public void tick() {
        Instant now = clock.instant();
        kept.forEach((sessionId, k) -> {
            if (k.renewing || now.isBefore(k.renewDue)) {
                return;
            }
            k.renewing = true;
            sessions.renew(k.tenant, sessionId, Optional.of(k.lease), OptionalLong.empty())
                    .subscribe().with(s -> {
                        k.renewDue = now.plus(k.renewEvery);
                        k.renewing = false;
                    }, failure -> {
                        k.renewing = false;
                        if (failure instanceof SessionException refusal
                                && (refusal.failure() == SessionFailure.NOT_LIVE
                                        || refusal.failure() == SessionFailure.NOT_FOUND)) {
                            if (kept.remove(sessionId) != null) {
                                String state = refusal.current().map(s -> s.state().name()).orElse("gone");
                                k.onLost.accept("session " + sessionId + " ended outside this request (" + state + ")");
                            }
                        } else {
                            LOG.warnf("renewing session %s failed, will retry: %s", sessionId, failure.getMessage());
                        }
                    });
        });
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }
}
