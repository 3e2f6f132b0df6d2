package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;

import java.util.List;
import java.util.Set;

/**
 * How one pool picks the endpoint for a new leg ({@code handoff.routes.<name>.prefill-policy} and
 * {@code decode-policy}). A choice only names a candidate; {@link EndpointPool#acquire} counts the leg on it and
 * chooses again when a race filled it in between. Implementations are safe for concurrent use and allocate little:
 * they run for every leg.
 */
public interface EndpointChoice {

    /** The prefix key of a request that has no prompt prefix to follow (or whose pool's policy needs none). */
    long NO_PREFIX = 0L;

    /**
     * The candidate for the next leg among {@code members} (the pool's active endpoints now), or null when none is
     * admissible.
     *
     * @param prefixKey the hash of the prompt's first blocks ({@link PromptPrefix}), or {@link #NO_PREFIX}
     */
    PooledEndpoint choose(List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding, long prefixKey);

    /** Whether this choice reads the prompt's prefix; when not, the pool does not spend time hashing it. */
    default boolean followsPrefix() {
        return false;
    }

    /** An endpoint may take a leg: not excluded, its breaker admits, and it is below its limit. */
    static boolean admissible(PooledEndpoint candidate, Set<Endpoint> exclude, int maxOutstanding) {
        return !exclude.contains(candidate.endpoint()) && candidate.breaker().admits()
                && candidate.outstanding() < maxOutstanding;
    }
}
