package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.smallrye.mutiny.Uni;

import java.util.function.Supplier;

/**
 * How a pool runs each probe of its endpoints, the fleet sampler's and its breakers' recovery probes alike. In the
 * gateway it is the {@link ProbeGuard} (a timeout per try, another try of a lost probe). It is an interface because
 * SmallRye Fault Tolerance finds its implementation through CDI: pools and routes made in plain unit tests, outside
 * Quarkus, cannot build a guard, and run their probes as they are.
 */
@FunctionalInterface
interface ProbeRunner {

    /** Runs {@code probe}, one probe of {@code endpoint}'s surfaces; may run it more than once. */
    Uni<EndpointStatus> probe(Endpoint endpoint, Supplier<Uni<EndpointStatus>> probe);
}
