package io.handoff.gateway.routing;

import java.util.List;

/**
 * Why a pool has no endpoint to give, as a client may be told: every endpoint that takes traffic is full (a retry
 * may find room), every endpoint is out of service after failures (a retry may find one recovered), or every
 * endpoint is out because its probe found it misconfigured for the route (wrong role or model: no retry helps until
 * an operator acts), or the pool has no endpoint at all (every one was retired: until one is added).
 * Names endpoints by their configured names only.
 *
 * @param verdicts for {@link Kind#MISCONFIGURED}, each endpoint's verdict (see {@link EndpointVerdict})
 */
public record PoolShortage(Kind kind, String pool, List<String> verdicts) {

    public enum Kind { FULL, OUT_OF_SERVICE, MISCONFIGURED, EMPTY }

    public PoolShortage {
        verdicts = List.copyOf(verdicts);
    }

    /** Whether every misconfigured endpoint answers as the wrong role (rather than serving the wrong model). */
    public boolean wrongRole() {
        return !verdicts.isEmpty() && verdicts.stream().allMatch(v -> v.startsWith(EndpointVerdict.WRONG_ROLE));
    }
}
