package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.Handoff;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.telemetry.RequestTrace;

/**
 * What acceptance of a Generate produced: the route, the planned handoff, the endpoints counted against their
 * pools and the allocated session. Everything a run needs, nothing it has to look up again.
 *
 * @param outputs how many outputs (num_sequences) the client expects
 * @param trace   the request's part of the trace
 */
record Admission(String requestId, String tenant, Route route, Handoff handoff, Session session,
        PooledEndpoint prefillSlot, PooledEndpoint decodeSlot, int outputs, RequestTrace trace) {
}
