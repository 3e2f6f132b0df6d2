package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.smallrye.mutiny.Uni;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The endpoints of one role on one route. Choice is least outstanding requests among endpoints whose breaker is
 * closed and that are below their limit, ties broken round-robin so that an idle pool still spreads its load.
 */
public final class EndpointPool {

    private final String name;
    private final List<PooledEndpoint> members;
    private final int maxOutstanding;
    private final Function<Endpoint, Uni<EndpointStatus>> prober;
    private final AtomicInteger turn = new AtomicInteger();

    public EndpointPool(String name, List<Endpoint> endpoints, Clock clock, int breakerFailures,
            Duration breakerOpenFor, int maxOutstanding, Function<Endpoint, Uni<EndpointStatus>> prober) {
        this.name = name;
        this.maxOutstanding = maxOutstanding;
        this.prober = prober;
        List<PooledEndpoint> list = new ArrayList<>();
        for (Endpoint e : endpoints) {
            list.add(new PooledEndpoint(e, new EndpointBreaker(clock, breakerFailures, breakerOpenFor)));
        }
        this.members = List.copyOf(list);
    }

    public String name() {
        return name;
    }

    public List<PooledEndpoint> members() {
        return members;
    }

    /**
     * Takes the best endpoint not in {@code exclude} and counts one request on it; the caller releases it. Empty
     * when every endpoint is open or full. Endpoints whose open period has passed are probed on the side.
     */
    public Optional<PooledEndpoint> acquire(Set<Endpoint> exclude) {
        probeRecovered();
        int n = members.size();
        // a race can fill the chosen endpoint between the choice and the count: then choose again among the rest
        for (int attempt = 0; attempt < n; attempt++) {
            int start = Math.floorMod(turn.getAndIncrement(), n);
            PooledEndpoint best = null;
            for (int i = 0; i < n; i++) {
                PooledEndpoint candidate = members.get((start + i) % n);
                if (exclude.contains(candidate.endpoint()) || !candidate.breaker().admits()
                        || candidate.outstanding() >= maxOutstanding) {
                    continue;
                }
                if (best == null || candidate.outstanding() < best.outstanding()) {
                    best = candidate;
                }
            }
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
     * Why {@link #acquire} found nothing, for the refusal a client gets: full while some endpoint takes traffic,
     * misconfigured when every endpoint's breaker is open on a probe's verdict, out of service otherwise.
     */
    public PoolShortage shortage() {
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
        probeRecovered();
        return members.stream().anyMatch(m -> m.breaker().admits() && m.outstanding() < maxOutstanding);
    }

    /**
     * Asks one member about itself through the connector's discovery surface, judged by {@link EndpointVerdict}:
     * a probe never fails, an endpoint that cannot be reached is reported unhealthy.
     */
    public Uni<EndpointStatus> probe(PooledEndpoint member) {
        return Uni.createFrom().deferred(() -> prober.apply(member.endpoint()))
                .onFailure().recoverWithItem(f -> new EndpointStatus(member.endpoint(), false, Optional.empty(),
                        List.of(), Optional.empty(), Map.of(), "probe failed: " + f.getMessage()));
    }

    public Optional<PooledEndpoint> member(String endpointName) {
        return members.stream().filter(m -> m.endpoint().name().equals(endpointName)).findFirst();
    }

    private void probeRecovered() {
        for (PooledEndpoint m : members) {
            if (m.breaker().takeProbe()) {
                Uni.createFrom().deferred(() -> prober.apply(m.endpoint()))
                        .subscribe().with(
                                status -> m.breaker().probed(status.healthy(), status.detail()),
                                failure -> m.breaker().probed(false, String.valueOf(failure.getMessage())));
            }
        }
    }
}
