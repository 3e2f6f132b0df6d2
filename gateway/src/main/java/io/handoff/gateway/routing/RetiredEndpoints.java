package io.handoff.gateway.routing;

import io.handoff.gateway.reaper.ReaperConfig;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * When a retired endpoint of a serving route may be let go, and which may be now. Cleanup obligations name their
 * engine by route and endpoint name ({@link RoutedCleanupPort}), so a retired endpoint stays resolvable for as long as
 * an obligation on it can still be owed, and only then is its pool's entry (and its name) given up:
 *
 * <ul>
 * <li>a leg that ran on it recorded its KV before it ended, and the engine frees that KV by its own timer within the
 * route's engine hold ({@code capabilities().engineHold()}) of the leg's end; a session's lease is never longer than
 * that hold either ({@link RouteFactory}), so a session with no leg left has ended by then;</li>
 * <li>after a session ends, the reaper finds it within one period and tries each open obligation at most
 * {@code max-attempts} times, each attempt within its claim ({@code claim-ttl}) and {@code retry-backoff} after the
 * one before.</li>
 * </ul>
 *
 * <p>So an endpoint is kept, after the last leg on it ended, for the engine hold plus that whole schedule, or
 * {@code handoff.retired-endpoint-keep} when that is longer. The bound is on the clock of this replica, found at the
 * registry's periodic look ({@link RouteRegistry#letGo}): late by up to one look, never early. What it does not
 * cover, and cannot without a store-wide search: a session kept alive past its engine hold by renewals (a caller
 * renewing, a decode leg on another endpoint still waiting for its first token); an obligation of such a session
 * that finds its endpoint gone is retried and left to the engine's own timer, as one naming an endpoint this replica
 * never knew.
 */
final class RetiredEndpoints {

    /** A retired endpoint found prunable: the route and pool it was found in. */
    record Due(Route route, String pool, EndpointPool members, PooledEndpoint member) {
    }

    private final Duration keep;
    private final Duration reaperSchedule;

    RetiredEndpoints(Duration keep, ReaperConfig reaper) {
        if (keep.isNegative()) {
            throw new IllegalArgumentException("handoff.retired-endpoint-keep must not be negative, not " + keep);
        }
        this.keep = keep;
        // each attempt: found within a period, decided within its claim, the next one a backoff later
        this.reaperSchedule = reaper.period().plus(reaper.claimTtl()).plus(reaper.retryBackoff())
                .multipliedBy(Math.max(1, reaper.maxAttempts()))
                .plus(reaper.period());
    }

    /** How long a retired endpoint of the route is kept after the last leg on it ended. */
    Duration keepFor(Route route) {
        Duration owed = route.capabilities().engineHold().plus(reaperSchedule);
        return owed.compareTo(keep) > 0 ? owed : keep;
    }

    /** When the retired endpoint may be let go, as last noted; empty while a leg runs on it, or while active. */
    Optional<Instant> prunableAt(Route route, PooledEndpoint member) {
        return member.quietSince().map(since -> since.plus(keepFor(route)));
    }

    /** Finds, without changing any pool's membership, the retired endpoints of these routes that may be let go at {@code now}. */
    List<Due> find(Collection<Route> routes, Instant now) {
        List<Due> due = new ArrayList<>();
        for (Route route : routes) {
            Duration kept = keepFor(route);
            for (String pool : List.of("prefill", "decode")) {
                EndpointPool members = PoolMembership.pool(route, pool);
                members.prunable(now, kept).forEach(m -> due.add(new Due(route, pool, members, m)));
            }
        }
        return due;
    }

    /** Lets go of one endpoint {@link #find} found, if it still is due at {@code now}: whether it was let go. */
    boolean prune(Due due, Instant now) {
        return due.members().prune(due.member(), now, keepFor(due.route()));
    }
}
