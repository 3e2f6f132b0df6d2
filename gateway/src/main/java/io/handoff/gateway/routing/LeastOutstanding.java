package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code least-outstanding}, the default: the admissible endpoint with the fewest outstanding requests, ties broken
 * round-robin so that an idle pool still spreads its load.
 */
final class LeastOutstanding implements EndpointChoice {

    private final AtomicInteger turn = new AtomicInteger();

    @Override
    public PooledEndpoint choose(List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding,
            long prefixKey) {
        int n = members.size();
        if (n == 0) {
            return null;
        }
        int start = Math.floorMod(turn.getAndIncrement(), n);
        PooledEndpoint best = null;
        for (int i = 0; i < n; i++) {
            PooledEndpoint candidate = members.get((start + i) % n);
            if (EndpointChoice.admissible(candidate, exclude, maxOutstanding)
                    && (best == null || candidate.outstanding() < best.outstanding())) {
                best = candidate;
            }
        }
        return best;
    }
}
