package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.openengine.v1.GenerateRequest;
import io.smallrye.mutiny.Uni;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * The endpoints of one role on one route. Choice is the pool's {@link EndpointChoice} among endpoints whose breaker
 * is closed and that are below their limit: by default least outstanding requests, ties broken round-robin so that
 * an idle pool still spreads its load.
 *
 * <p>Membership can change while the pool serves ({@link #add}, {@link #retire}): choice reads an immutable
 * {@link Membership} without a lock, and a change swaps in a new one (copy-on-write; changes are rare and serialised
 * among themselves). A retired endpoint takes no new legs, but it stays resolvable by name ({@link #member}): legs
 * that run on it finish and release on it, and the KV it holds stays an obligation the reaper can discharge there.
 * It is let go only once nothing can need it any more: no leg has run on it for a time its route sets
 * ({@link #prunable} finds such endpoints, {@link #prune} takes each out after checking again).
 */
public final class EndpointPool {

    /**
     * The pool at one moment, never changed once made.
     *
     * @param active  the endpoints that take new legs, in the order they joined
     * @param retired the endpoints that take none but may still run legs or hold KV
     */
    public record Membership(List<PooledEndpoint> active, List<PooledEndpoint> retired) {

        public Membership {
            active = List.copyOf(active);
            retired = List.copyOf(retired);
        }
    }

    private final String name;
    private final Clock clock;
    private final int breakerFailures;
    private final Duration breakerOpenFor;
    private final int maxOutstanding;
    private final Function<Endpoint, Uni<EndpointStatus>> prober;
    private final ProbeRunner probes;
    private final EndpointChoice choice;
    private final PromptPrefix prefix;
    private volatile Membership membership;

    /** A pool that chooses least-outstanding. */
    EndpointPool(String name, List<Endpoint> endpoints, Clock clock, int breakerFailures, Duration breakerOpenFor,
            int maxOutstanding, Function<Endpoint, Uni<EndpointStatus>> prober, ProbeRunner probes) {
        this(name, endpoints, clock, breakerFailures, breakerOpenFor, maxOutstanding, prober, probes,
                new LeastOutstanding(), PromptPrefix.DEFAULT);
    }

    /**
     * @param prober  one probe of an endpoint's discovery surface, judged by {@link EndpointVerdict}
     * @param probes  how every probe runs, the sampler's and the breakers' recovery probes: in the gateway, under the
     *                {@link ProbeGuard}
     * @param choice  how a leg's endpoint is chosen
     * @param prefix  what of a prompt the choice follows, when it {@link EndpointChoice#followsPrefix() follows} one
     */
    EndpointPool(String name, List<Endpoint> endpoints, Clock clock, int breakerFailures, Duration breakerOpenFor,
            int maxOutstanding, Function<Endpoint, Uni<EndpointStatus>> prober, ProbeRunner probes,
            EndpointChoice choice, PromptPrefix prefix) {
        this.name = name;
        this.choice = choice;
        this.prefix = prefix;
        this.clock = clock;
        this.breakerFailures = breakerFailures;
        this.breakerOpenFor = breakerOpenFor;
        this.maxOutstanding = maxOutstanding;
        this.prober = prober;
        this.probes = probes;
        List<PooledEndpoint> list = new ArrayList<>();
        for (Endpoint e : endpoints) {
            list.add(newMember(e, EndpointSource.STATIC));
        }
        this.membership = new Membership(list, List.of());
    }

    public String name() {
        return name;
    }

    /** The endpoints that take new legs now. */
    public List<PooledEndpoint> members() {
        return membership.active();
    }

    /** The active and the retired endpoints now, as one consistent view. */
    public Membership membership() {
        return membership;
    }

    /**
     * Adds an endpoint, set up as one configured at start (its own breaker, closed). A retired endpoint of the same
     * name and address is taken back as it is: its running legs still count on it.
     *
     * @throws IllegalStateException    when an active endpoint has the name already
     * @throws IllegalArgumentException when a retired endpoint has the name with another address: obligations name
     *                                  their engine by endpoint name, so one name must keep meaning one engine
     */
    public synchronized PooledEndpoint add(Endpoint endpoint, EndpointSource source) {
        Membership now = membership;
        if (find(now.active(), endpoint.name()).isPresent()) {
            throw new IllegalStateException("pool " + name + " already has an endpoint named '" + endpoint.name()
                    + "'");
        }
        List<PooledEndpoint> retired = new ArrayList<>(now.retired());
        PooledEndpoint member = find(retired, endpoint.name()).orElse(null);
        if (member != null && !member.endpoint().uri().equals(endpoint.uri())) {
            throw new IllegalArgumentException("pool " + name + " has retired an endpoint named '" + endpoint.name()
                    + "' at another address, whose KV may still be owed cleanup; choose another name");
        }
        if (member == null) {
            member = newMember(endpoint, EndpointSource.STATIC);
        } else {
            retired.remove(member);
            member.reinstated();
        }
        member.source(source);
        List<PooledEndpoint> active = new ArrayList<>(now.active());
        active.add(member);
        membership = new Membership(active, retired);
        return member;
    }

    /** Retires an active endpoint: no new legs from now on. Empty when no active endpoint has the name. */
    public synchronized Optional<PooledEndpoint> retire(String endpointName) {
        Membership now = membership;
        Optional<PooledEndpoint> member = find(now.active(), endpointName);
        member.ifPresent(m -> {
            List<PooledEndpoint> active = new ArrayList<>(now.active());
            active.remove(m);
            List<PooledEndpoint> retired = new ArrayList<>(now.retired());
            retired.add(m);
            m.retired(clock.instant());
            membership = new Membership(active, retired);
        });
        return member;
    }

    /**
     * Finds the retired endpoints that may be let go at {@code now}: no leg has run on them for {@code keep}. Finding
     * changes no membership; it notes, for each retired endpoint, since when no leg has run on it, so a window starts
     * at the first look that sees it quiet (late by up to the time between looks, never early).
     */
    public synchronized List<PooledEndpoint> prunable(Instant now, Duration keep) {
        List<PooledEndpoint> due = new ArrayList<>();
        for (PooledEndpoint m : membership.retired()) {
            if (dueAt(m, now, keep)) {
                due.add(m);
            }
        }
        return due;
    }

    /**
     * Lets go of a retired endpoint {@link #prunable} found, after checking again that it still is due: still retired
     * (not taken back since), still no leg running, still quiet for {@code keep} at {@code now}. Once let go its name
     * no longer resolves here, and may be given to an engine again, at any address.
     *
     * @return whether it was let go
     */
    public synchronized boolean prune(PooledEndpoint candidate, Instant now, Duration keep) {
        Membership current = membership;
        if (current.retired().stream().noneMatch(m -> m == candidate) || !dueAt(candidate, now, keep)) {
            return false;
        }
        List<PooledEndpoint> retired = new ArrayList<>(current.retired());
        retired.removeIf(m -> m == candidate);
        membership = new Membership(current.active(), retired);
        return true;
    }

    private static boolean dueAt(PooledEndpoint m, Instant now, Duration keep) {
        return m.noteQuiet(now).map(since -> !now.isBefore(since.plus(keep))).orElse(false);
    }

    /**
     * Takes over, from the pool this one replaces at a reload, the state of the endpoints both have: an active
     * endpoint of the same name and address is the same object here (its breaker, its running legs' count, what its
     * probes learned), so a reload does not reset what the pool knows of an engine nor double its limit. Endpoints
     * the previous pool got from an admin call or discovery join this one as they were, unless configuration now
     * names them. When the breaker's settings changed, every endpoint gets a new breaker (and count) instead. Called
     * once, before the pool serves.
     */
    synchronized void carryOver(EndpointPool previous) {
        boolean sameBreakers = previous.breakerFailures == breakerFailures
                && previous.breakerOpenFor.equals(breakerOpenFor);
        List<PooledEndpoint> active = new ArrayList<>();
        for (PooledEndpoint fresh : membership.active()) {
            PooledEndpoint kept = sameBreakers ? find(previous.members(), fresh.endpoint().name())
                    .filter(old -> old.endpoint().uri().equals(fresh.endpoint().uri())).orElse(fresh) : fresh;
            kept.source(EndpointSource.STATIC);
            active.add(kept);
        }
        for (PooledEndpoint old : previous.members()) {
            if (old.source() != EndpointSource.STATIC && find(active, old.endpoint().name()).isEmpty()) {
                active.add(sameBreakers ? old : newMember(old.endpoint(), old.source()));
            }
        }
        membership = new Membership(active, List.of());
    }

    private PooledEndpoint newMember(Endpoint endpoint, EndpointSource source) {
        return new PooledEndpoint(endpoint, new EndpointBreaker(clock, breakerFailures, breakerOpenFor), source);
    }

    private static Optional<PooledEndpoint> find(List<PooledEndpoint> members, String endpointName) {
        for (PooledEndpoint m : members) {
            if (m.endpoint().name().equals(endpointName)) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    /** {@link #acquire(Set, long)} for a leg whose prompt's prefix does not matter to the choice. */
    public Optional<PooledEndpoint> acquire(Set<Endpoint> exclude) {
        return acquire(exclude, EndpointChoice.NO_PREFIX);
    }

    /**
     * Takes the best endpoint not in {@code exclude} and counts one request on it; the caller releases it. Empty
     * when every endpoint is open or full. Endpoints whose open period has passed are probed on the side.
     *
     * @param prefixKey the request's {@link #prefixKey}, for a choice that follows prompt prefixes
     */
    public Optional<PooledEndpoint> acquire(Set<Endpoint> exclude, long prefixKey) {
        List<PooledEndpoint> members = membership.active();
        probeRecovered(members);
        int n = members.size();
        // a race can fill the chosen endpoint between the choice and the count: then choose again among the rest
        for (int attempt = 0; attempt < n; attempt++) {
            PooledEndpoint best = choice.choose(members, exclude, maxOutstanding, prefixKey);
            if (best == null) {
                return Optional.empty();
            }
            if (best.tryAcquire(maxOutstanding)) {
                return Optional.of(best);
            }
        }
        return Optional.empty();
    }

    /**
     * Takes, for a request whose prompt the endpoints may hold in their prefix caches, the active endpoint holding
     * the most of it ({@code cachedTokens}), among those below the load bound ({@link PrefixAffinity#bound}: so a
     * hot prompt spills over instead of queueing on one endpoint); ties go to the first in the pool's order. When no
     * endpoint under the bound holds any of it, or a race filled the one chosen, the pool's own choice decides.
     */
    public Optional<PooledEndpoint> acquireCached(ToIntFunction<PooledEndpoint> cachedTokens, double loadBound) {
        List<PooledEndpoint> members = membership.active();
        probeRecovered(members);
        long bound = PrefixAffinity.bound(loadBound, members, Set.of(), maxOutstanding);
        PooledEndpoint best = null;
        int bestTokens = 0;
        for (PooledEndpoint m : members) {
            if (m.outstanding() < bound && EndpointChoice.admissible(m, Set.of(), maxOutstanding)) {
                int tokens = cachedTokens.applyAsInt(m);
                if (tokens > bestTokens) {
                    best = m;
                    bestTokens = tokens;
                }
            }
        }
        if (best != null && best.tryAcquire(maxOutstanding)) {
            return Optional.of(best);
        }
        return acquire(Set.of(), EndpointChoice.NO_PREFIX);
    }

    /**
     * The key of the request's prompt prefix when this pool's choice follows one, else
     * {@link EndpointChoice#NO_PREFIX} at no cost.
     */
    public long prefixKey(GenerateRequest request) {
        return choice.followsPrefix() ? prefix.keyOf(request) : EndpointChoice.NO_PREFIX;
    }

    /**
     * Why {@link #acquire} found nothing, for the refusal a client gets: full while some endpoint takes traffic,
     * misconfigured when every endpoint's breaker is open on a probe's verdict, empty when every endpoint was
     * retired, out of service otherwise.
     */
    public PoolShortage shortage() {
        List<PooledEndpoint> members = membership.active();
        if (members.isEmpty()) {
            return new PoolShortage(PoolShortage.Kind.EMPTY, name, List.of());
        }
        if (members.stream().anyMatch(m -> m.breaker().admits())) {
            return new PoolShortage(PoolShortage.Kind.FULL, name, List.of());
        }
        List<String> verdicts = new ArrayList<>();
        for (PooledEndpoint m : members) {
            String why = m.breaker().lastFailure();
            if (EndpointVerdict.kindOf(why).isEmpty()) {
                return new PoolShortage(PoolShortage.Kind.OUT_OF_SERVICE, name, List.of());
            }
            verdicts.add(EndpointVerdict.headline(why));
        }
        return new PoolShortage(PoolShortage.Kind.MISCONFIGURED, name, verdicts);
    }

    /** Whether some endpoint would be chosen now. */
    public boolean available() {
        List<PooledEndpoint> members = membership.active();
        probeRecovered(members);
        return members.stream().anyMatch(m -> m.breaker().admits() && m.outstanding() < maxOutstanding);
    }

    /**
     * Asks one member about itself through the connector's discovery surface, judged by {@link EndpointVerdict},
     * as the pool runs its probes (in the gateway under the {@link ProbeGuard}: a timeout per try, another try of a
     * lost probe): a probe never fails, an endpoint that cannot be reached or does not answer in time is reported
     * unhealthy.
     */
    public Uni<EndpointStatus> probe(PooledEndpoint member) {
        return probes.probe(member.endpoint(), () -> prober.apply(member.endpoint()))
                .onFailure().recoverWithItem(f -> new EndpointStatus(member.endpoint(), false, Optional.empty(),
                        List.of(), Optional.empty(), Map.of(), "probe failed: " + f.getMessage()));
    }

    /** The endpoint of that name, active or retired: what a running leg or an owed discharge names. */
    public Optional<PooledEndpoint> member(String endpointName) {
        Membership now = membership;
        return find(now.active(), endpointName).or(() -> find(now.retired(), endpointName));
    }

    /**
     * Probes, on the side, each endpoint whose open period has passed. The probe runs as a sample's does, in the
     * gateway under the {@link ProbeGuard}: a probe lost once would otherwise reopen the breaker for a whole period,
     * and one that never answered would leave it probing, its endpoint out, for as long as it did not.
     */
    private void probeRecovered(List<PooledEndpoint> members) {
        for (PooledEndpoint m : members) {
            if (m.breaker().takeProbe()) {
                probe(m).subscribe().with(status -> m.breaker().probed(status.healthy(), status.detail()),
                        failure -> m.breaker().probed(false, String.valueOf(failure.getMessage())));
            }
        }
    }
}
