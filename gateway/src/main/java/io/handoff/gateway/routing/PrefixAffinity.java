package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * {@code prefix-affinity} (prefill pools): requests whose prompts share their first blocks ({@link PromptPrefix}) go
 * to the same endpoint, which has their prefix in its cache already, as long as that endpoint is not overloaded.
 *
 * <p>Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2018): each active endpoint owns
 * {@value #POINTS_PER_ENDPOINT} points on a 64-bit ring; a request starts at its prefix key and walks clockwise to the
 * first admissible endpoint whose outstanding requests are below {@code ceil(load-bound x (outstanding + 1) / n)},
 * over the n admissible endpoints, this request counted. So a hot prefix spills to the next endpoint on the ring (the
 * same one each time, whose cache then warms too) instead of queueing on one, and an endpoint that joins or retires
 * moves only the prefixes of its own arcs, about 1/n of them, leaving every other cache warm. A radix tree of
 * prompts per endpoint (SGLang's cache-aware policy) would follow the longest match, but it must be fed and evicted
 * in step with the engines' caches, which the gateway cannot see; the ring needs no state beyond membership.
 *
 * <p>Load is this replica's outstanding requests per endpoint, exact and current; the engines' own samples (GetLoad)
 * are seconds old and not every family reports them. Requests without a prefix (no input) get least-outstanding.
 */
final class PrefixAffinity implements EndpointChoice {

    static final int POINTS_PER_ENDPOINT = 100;

    /** The ring of one membership, never changed once made. */
    private record Ring(List<PooledEndpoint> members, long[] points, PooledEndpoint[] owners) {

        static Ring of(List<PooledEndpoint> members) {
            record Point(long at, PooledEndpoint owner) {
            }
            List<Point> all = new ArrayList<>(members.size() * POINTS_PER_ENDPOINT);
            for (PooledEndpoint m : members) {
                // by name: an endpoint that retires and comes back gets its arcs (and their warm prefixes) back
                for (int i = 0; i < POINTS_PER_ENDPOINT; i++) {
                    all.add(new Point(PromptPrefix.hashOf(m.endpoint().name() + "#" + i), m));
                }
            }
            all.sort(Comparator.comparingLong(Point::at));
            long[] points = new long[all.size()];
            PooledEndpoint[] owners = new PooledEndpoint[all.size()];
            for (int i = 0; i < points.length; i++) {
                points[i] = all.get(i).at();
                owners[i] = all.get(i).owner();
            }
            return new Ring(members, points, owners);
        }
    }

    private final double loadBound;
    private final LeastOutstanding unkeyed = new LeastOutstanding();
    private volatile Ring ring = Ring.of(List.of());

    /** @param loadBound the multiple of the average load above which an endpoint is passed over; above 1 */
    PrefixAffinity(double loadBound) {
        if (!(loadBound > 1.0) || Double.isInfinite(loadBound)) {
            throw new IllegalArgumentException("load-bound must be a number above 1");
        }
        this.loadBound = loadBound;
    }

    @Override
    public boolean followsPrefix() {
        return true;
    }

    @Override
    public PooledEndpoint choose(List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding,
            long prefixKey) {
        if (prefixKey == NO_PREFIX) {
            return unkeyed.choose(members, exclude, maxOutstanding, prefixKey);
        }
        long bound = bound(loadBound, members, exclude, maxOutstanding);
        if (bound == 0) {
            return null;
        }
        Ring r = ringOf(members);
        int n = r.points().length;
        int start = firstAtOrAfter(r.points(), prefixKey);
        for (int i = 0; i < n; i++) {
            PooledEndpoint owner = r.owners()[(start + i) % n];
            if (owner.outstanding() < bound && EndpointChoice.admissible(owner, exclude, maxOutstanding)) {
                return owner;
            }
        }
        // every admissible endpoint rose above the bound since the count above (races): the least loaded then
        return unkeyed.choose(members, exclude, maxOutstanding, prefixKey);
    }

    /**
     * The outstanding requests an endpoint must be below to take a leg that follows a prefix:
     * {@code ceil(loadBound x (outstanding + 1) / n)} over the n admissible endpoints, this request counted; 0 when
     * none is admissible.
     */
    static long bound(double loadBound, List<PooledEndpoint> members, Set<Endpoint> exclude, int maxOutstanding) {
        int admissible = 0;
        long outstanding = 0;
        for (PooledEndpoint m : members) {
            if (EndpointChoice.admissible(m, exclude, maxOutstanding)) {
                admissible++;
                outstanding += m.outstanding();
            }
        }
        return admissible == 0 ? 0 : (long) Math.ceil(loadBound * (outstanding + 1) / admissible);
    }

    /** The ring of this membership; rebuilt when the pool's membership changed (a new active list). */
    private Ring ringOf(List<PooledEndpoint> members) {
        Ring r = ring;
        if (r.members() != members) {
            r = Ring.of(members);
            ring = r; // two legs racing here build the same ring; either may stay
        }
        return r;
    }

    /** The index of the first point at or after {@code key}, wrapping to 0 past the last (signed order). */
    private static int firstAtOrAfter(long[] points, long key) {
        int lo = 0;
        int hi = points.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (points[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == points.length ? 0 : lo;
    }
}
