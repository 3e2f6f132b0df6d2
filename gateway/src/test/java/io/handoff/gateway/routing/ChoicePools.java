package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.testing.MutableClock;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Real pools for the endpoint-choice tests: closed breakers, a probe that would answer healthy, loads set by hand. */
final class ChoicePools {

    static final int MAX_OUTSTANDING = 100;
    static final PromptPrefix PREFIX = new PromptPrefix(16, 8);

    private ChoicePools() {
    }

    static EndpointPool pool(EndpointChoice choice, String... names) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String n : names) {
            endpoints.add(endpoint(n));
        }
        return new EndpointPool("test", endpoints, new MutableClock(), 3, Duration.ofSeconds(10), MAX_OUTSTANDING,
                e -> Uni.createFrom().item(new EndpointStatus(e, true, Optional.empty(), List.of(), Optional.empty(),
                        Map.of(), "ok")), ProbesAsTheyAre.RUNNER, choice, PREFIX);
    }

    static Endpoint endpoint(String name) {
        return Endpoint.of(name, "http://127.0.0.1:1/" + name);
    }

    /** Gives the endpoint {@code count} more outstanding requests. */
    static void load(EndpointPool pool, String name, int count) {
        PooledEndpoint member = pool.member(name).orElseThrow();
        for (int i = 0; i < count; i++) {
            member.tryAcquire(Integer.MAX_VALUE);
        }
    }

    /** The endpoint a leg with this key gets, given back at once so that the loads stay as they were. */
    static String peek(EndpointPool pool, long prefixKey) {
        return peek(pool, prefixKey, Set.of());
    }

    static String peek(EndpointPool pool, long prefixKey, Set<Endpoint> exclude) {
        Optional<PooledEndpoint> chosen = pool.acquire(exclude, prefixKey);
        chosen.ifPresent(PooledEndpoint::giveBack);
        return chosen.map(p -> p.endpoint().name()).orElse("none");
    }
}
