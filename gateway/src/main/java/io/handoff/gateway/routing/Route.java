package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.ScheduleStyle;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;


/**
 * A route as it serves: its settings after negotiation with the connector, the connector itself and the two pools.
 *
 * @param leaseDefault the lease its sessions get
 * @param leaseMax     the longest lease its sessions may be given
 * @param decodeCache  what the decode endpoints' prefix caches probably hold, for the uncached-prompt bypass
 */
public record Route(
        RouteSettings settings,
        ConnectorCapabilities capabilities,
        EngineConnector connector,
        EndpointPool prefill,
        EndpointPool decode,
        Duration leaseDefault,
        Duration leaseMax,
        AtomicInteger inFlight,
        DecodeCacheEstimate decodeCache) {

    public String name() {
        return settings.name();
    }

    public String family() {
        return settings.family();
    }

    /**
     * The longest context every engine of the route accepts, as their probes last reported it (the shortest of
     * them); empty until one reports it. A request that cannot fit is refused before anything is allocated, as the
     * engine would refuse it.
     */
    public OptionalInt contextLength() {
        // a loop, not a stream: this runs for every request
        int least = Integer.MAX_VALUE;
        for (List<PooledEndpoint> members : List.of(prefill.members(), decode.members())) {
            for (PooledEndpoint member : members) {
                Optional<Integer> length = member.contextLength();
                if (length.isPresent()) {
                    least = Math.min(least, length.get());
                }
            }
        }
        return least == Integer.MAX_VALUE ? OptionalInt.empty() : OptionalInt.of(least);
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
