package io.handoff.gateway.control;

import io.handoff.gateway.runtime.DrainState;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness goes DOWN the moment this replica starts stopping ({@link ReplicaStop}), so that a load balancer or
 * Kubernetes' endpoints stop sending it traffic while its running requests finish. A deployment's drain leaves
 * readiness up: its sessions are still renewed and released through every replica.
 */
@Readiness
@ApplicationScoped
public class ReplicaStopHealthCheck implements HealthCheck {

    private final DrainState state;

    public ReplicaStopHealthCheck(DrainState state) {
        this.state = state;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("replica-running").status(!state.stopping()).build();
    }
}
