package io.handoff.gateway.control;

import io.handoff.gateway.orchestration.LiveRequests;
import io.handoff.gateway.orchestration.OrchestrationConfig;
import io.handoff.gateway.orchestration.RunningRequest;
import io.handoff.gateway.runtime.DrainState;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The graceful stop of this replica (SIGTERM: Kubernetes deleting the pod, a rolling deploy, {@code kill}), in Quarkus'
 * pre-shutdown phase, while the listeners, Redis and the engines' clients still work:
 * <ol>
 * <li>new Generates and allocations are refused here as a draining deployment refuses them (DRAINING, gRPC
 * UNAVAILABLE, HTTP 503), and readiness goes DOWN ({@link ReplicaStopHealthCheck}) so that traffic moves away;
 * renewals, releases, lookups and participants' legs on sessions that exist go on;</li>
 * <li>the Generates running here finish, up to {@code handoff.stop.grace-period}, their leases still renewed;</li>
 * <li>what still runs is aborted, as Control.Abort would: legs aborted natively, the session CANCELLED with its
 * cleanup obligations recorded and discharged, waited for up to {@code handoff.orchestration.abort-timeout}.</li>
 * </ol>
 * Whatever this does not end (an abort that did not finish, a session a participant holds, a cleanup this replica had
 * claimed) has a lease or a claim in the store: it runs out and another replica's reaper ends it and discharges its
 * obligations, as after a crash. No session is left without an owner that will end it.
 */
@ApplicationScoped
public class ReplicaStop {

    private static final Logger LOG = Logger.getLogger(ReplicaStop.class);
    static final String REASON = "the replica stopped before the request finished";
    private static final long POLL_MS = 50;

    private final DrainState state;
    private final LiveRequests live;
    private final StopConfig config;
    private final OrchestrationConfig orchestration;
    private final AtomicBoolean stopped = new AtomicBoolean();

    public ReplicaStop(DrainState state, LiveRequests live, StopConfig config, OrchestrationConfig orchestration) {
        this.state = state;
        this.live = live;
        this.config = config;
        this.orchestration = orchestration;
    }

    /**
     * Quarkus' pre-shutdown phase ({@code quarkus.shutdown.delay-enabled=true}, application.properties): the first
     * thing a SIGTERM does, before any listener closes. Later, with the HTTP server already stopping, open HTTP streams
     * were cut (the chaos harness's {@code replica-term} found it) while gRPC ones went on.
     */
    void onSignal(@Observes ShutdownDelayInitiatedEvent event) {
        stop();
    }

    /** Where the pre-shutdown phase is not built in: first among the shutdown observers. */
    void onStop(@Observes @Priority(1) ShutdownEvent event) {
        stop();
    }

    /** Stops taking work, waits for what runs, aborts what is left; answers how many requests were aborted. */
    int stop() {
        if (!stopped.compareAndSet(false, true)) {
            return 0;
        }
        state.stop();
        int running = live.size();
        LOG.infof("stopping: no new Generate or allocation here; %d running, given up to %s to finish", running,
                config.gracePeriod());
        if (awaitNoneRunning(config.gracePeriod())) {
            LOG.infof("stopping: every running request finished");
            return 0;
        }
        List<RunningRequest> left = live.all(null);
        LOG.warnf("stopping: %d requests still running after %s, aborting them", left.size(), config.gracePeriod());
        left.forEach(r -> r.abort(REASON));
        if (!awaitNoneRunning(orchestration.abortTimeout())) {
            LOG.warnf("stopping: %d requests did not end within %s; their sessions' leases run out and another "
                    + "replica's reaper ends them", live.size(), orchestration.abortTimeout());
        }
        return left.size();
    }

    /**
     * Waits on the process's own time, not the injected clock: this is a wait for the exit, not a lease, and a test's
     * clock that stands still must not hold its application's shutdown forever.
     */
    private boolean awaitNoneRunning(Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (live.size() > 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
