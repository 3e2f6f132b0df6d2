package io.handoff.gateway.reaper;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.quarkus.arc.DefaultBean;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Used until a connector registry provides the real port: every discharge is retried and, after the configured
 * attempts, abandoned to the engine's own timer, which is what happens to an obligation whose connector is gone.
 */
@DefaultBean
@ApplicationScoped
public class UnroutedCleanupPort implements CleanupPort {

    @Override
    public Uni<DischargeResult> discharge(Session session, CleanupObligation obligation) {
        return Uni.createFrom().item(DischargeResult.retry("no connector registered as '" + obligation.connector() + "'"));
    }
}
