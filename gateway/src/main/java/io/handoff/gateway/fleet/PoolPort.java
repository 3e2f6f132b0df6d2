package io.handoff.gateway.fleet;

import io.handoff.gateway.routing.RoutingConfig.KubernetesEndpoints;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which of the ports an object offers is the pool's, alike for a slice's ports and a pod's container ports: the
 * configured number; else the port of the configured name; else the only port, where there is one.
 */
final class PoolPort {

    private PoolPort() {
    }

    static <P> Optional<Integer> of(KubernetesEndpoints pool, List<P> ports, Function<P, String> name,
            Function<P, Integer> number) {
        if (pool.port().isPresent()) {
            return Optional.of(pool.port().getAsInt());
        }
        if (ports == null) {
            return Optional.empty();
        }
        if (pool.portName().isPresent()) {
            return ports.stream().filter(p -> pool.portName().get().equals(name.apply(p)))
                    .map(number).filter(Objects::nonNull).findFirst();
        }
        return ports.size() == 1 ? Optional.ofNullable(number.apply(ports.get(0))) : Optional.empty();
    }
}
