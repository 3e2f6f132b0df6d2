package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A route as it serves: its settings after negotiation with the connector, the connector itself and the two pools.
 *
 * @param leaseDefault the lease its sessions get
 * @param leaseMax     the longest lease its sessions may be given
 */
public record Route(
        RouteSettings settings,
        ConnectorCapabilities capabilities,
        EngineConnector connector,
        EndpointPool prefill,
        EndpointPool decode,
        Duration leaseDefault,
        Duration leaseMax,
        AtomicInteger inFlight) {

    public String name() {
        return settings.name();
    }

    public String family() {
        return settings.family();
    }

    public boolean allows(ScheduleStyle style) {
        return settings.styles().contains(style);
    }

    /** Counts one request against the route's bulkhead; false when it is full. */
    public boolean admit() {
        while (true) {
            int now = inFlight.get();
            if (now >= settings.maxInFlight()) {
                return false;
            }
            if (inFlight.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    public void leave() {
        inFlight.decrementAndGet();
    }
}
