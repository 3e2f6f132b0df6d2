package io.handoff.connector.openai.family;

import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.smallrye.mutiny.Uni;

/**
 * A connector whose engines have no API to abort a request or to free parked KV: closing a leg's connection is the
 * only abort there is, and parked KV stays until a decode takes it or the engine's own timer ends.
 */
public interface NoCleanupApi extends EngineConnector {

    /** Nothing to call: the gateway's cancellation closes the leg's connection, which aborts it. */
    @Override
    default Uni<Void> abort(Handoff handoff, Leg leg) {
        return Uni.createFrom().voidItem();
    }

    /** Nothing can free the KV early: the engine holds it until a decode takes it or its timer ends. */
    @Override
    default Uni<DischargeResult> discharge(HeldKv held) {
        return Uni.createFrom().item(DischargeResult.engineHoldsUntil(held.heldUntil()));
    }
}
