package io.handoff.gateway.reaper;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.smallrye.mutiny.Uni;

/**
 * The way out to the engines: discharge one obligation through the connector that recorded it. The reaper calls
 * it for exactly one replica at a time per obligation (under a cleanup claim); implementations must still be
 * idempotent, because a replica that stalls past its claim may be overtaken by another.
 */
public interface CleanupPort {

    Uni<DischargeResult> discharge(Session session, CleanupObligation obligation);
}
