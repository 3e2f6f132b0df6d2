package io.handoff.gateway.orchestration;

import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;

/**
 * A request that took its slot: what it took, and its run, which gives it all back when it ends. A run that is
 * never subscribed gives nothing back: whoever drops it cancels the reservation.
 */
record Admitted(Reservation reservation, Multi<GenerateResponse> run) {
}
