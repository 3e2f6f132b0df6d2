package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntUnaryOperator;

/**
 * {@code power-of-two}: two distinct admissible endpoints drawn at random, the one with fewer outstanding requests
 * wins (the first drawn on a tie). Nearly as even as least-outstanding, without every replica herding onto the same
 * least-loaded endpoint between two load updates.
 */
final class PowerOfTwo implements EndpointChoice {

    private final IntUnaryOperator draw;

    /** Draws from {@link ThreadLocalRandom}. */
    PowerOfTwo() {
        this(bound -> ThreadLocalRandom.current().nextInt(bound));
    }

    /** @param draw given a bound, an index in {@code [0, bound)}: injectable so that tests choose the draws */
    PowerOfTwo(IntUnaryOperator draw) {
        this.draw = draw;
    }

    @Override
    public PooledEndpoint choose(List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding,
            long prefixKey) {
        // two passes over the members instead of a list of the admissible ones: nothing allocated per leg
        int admissible = 0;
        for (PooledEndpoint m : members) {
            if (EndpointChoice.admissible(m, exclude, maxOutstanding)) {
                admissible++;
            }
        }
        if (admissible == 0) {
            return null;
        }
        if (admissible == 1) {
            return nth(members, exclude, maxOutstanding, 0);
        }
        int first = draw.applyAsInt(admissible);
        int second = draw.applyAsInt(admissible - 1);
        if (second >= first) {
            second++;
        }
        PooledEndpoint a = nth(members, exclude, maxOutstanding, first);
        PooledEndpoint b = nth(members, exclude, maxOutstanding, second);
        if (a == null || b == null) {
            return a == null ? b : a; // one filled since the count: the other is still a fair pick
        }
        return b.outstanding() < a.outstanding() ? b : a;
    }

    /** The {@code index}-th admissible member, or null when fewer are admissible now. */
    private static PooledEndpoint nth(List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding,
            int index) {
        int seen = 0;
        for (PooledEndpoint m : members) {
            if (EndpointChoice.admissible(m, exclude, maxOutstanding)) {
                if (seen == index) {
                    return m;
                }
                seen++;
            }
        }
        return null;
    }
}
