package io.handoff.gateway.routing;

import io.smallrye.mutiny.Uni;

/**
 * Probes run as they are, without a guard, for pools and routes made in plain unit tests: SmallRye Fault Tolerance
 * finds its implementation through CDI, which these tests do not start. The guard itself is tested in the gateway
 * ({@code GuardedProbeTest}, {@code GuardedRecoveryProbeTest}, {@code HungRecoveryProbeTest}).
 */
final class ProbesAsTheyAre {

    static final ProbeRunner RUNNER = (endpoint, probe) -> Uni.createFrom().deferred(probe::get);

    private ProbesAsTheyAre() {
    }
}
