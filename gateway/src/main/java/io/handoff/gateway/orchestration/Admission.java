package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.Handoff;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.telemetry.RequestTrace;

import java.util.Locale;

/**
 * What acceptance of a Generate produced: the route, the planned handoff, the endpoints counted against their
 * pools and the allocated session. Everything a run needs, nothing it has to look up again.
 *
 * @param legs        which legs this request runs: both (orchestrated) or one (a participant's leg)
 * @param prefillSlot null when the request runs no prefill leg
 * @param decodeSlot  null when the request runs no decode leg
 * @param outputs     how many outputs (num_sequences) the client expects
 * @param trace       the request's part of the trace
 * @param arrivedNanos {@link System#nanoTime()} when the call arrived
 */
record Admission(String requestId, String tenant, Route route, Legs legs, Handoff handoff, Session session,
        PooledEndpoint prefillSlot, PooledEndpoint decodeSlot, int outputs, RequestTrace trace, long arrivedNanos) {

    /** How the request runs, as metrics name it: the style, or {@code participant-prefill}/{@code -decode}. */
    String styleName() {
        return legs == Legs.BOTH ? handoff.style().configName() : "participant-" + legs.name().toLowerCase(Locale.ROOT);
    }

    enum Legs {
        /** Orchestrated: both legs, in the style's order. */
        BOTH,
        /** A participant's prefill leg: ends with PrefillReady, the session stays READY for the decode leg. */
        PREFILL,
        /** A participant's decode leg: attaches to a READY session and completes it. */
        DECODE
    }
}
