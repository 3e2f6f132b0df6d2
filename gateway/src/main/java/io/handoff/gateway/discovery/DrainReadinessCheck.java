package io.handoff.gateway.discovery;

import io.handoff.gateway.runtime.DrainState;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Readiness is DOWN while the deployment drains, so load balancers stop sending new work to it. */
@Readiness
@ApplicationScoped
public class DrainReadinessCheck implements HealthCheck {

    private final DrainState drain;

    public DrainReadinessCheck(DrainState drain) {
        this.drain = drain;
    }

    @Override
    public HealthCheckResponse call() {
        return drain.since().map(since -> HealthCheckResponse.named("drain").down()
                .withData("draining-since", since.toString()).build())
                .orElseGet(() -> HealthCheckResponse.named("drain").up().build());
    }
}
