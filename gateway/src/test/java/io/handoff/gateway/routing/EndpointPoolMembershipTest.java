package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.testing.MutableClock;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool's membership while it serves: added endpoints are chosen, retired ones never are but stay resolvable by
 * name (for the legs running on them and the KV they hold), one name keeps meaning one engine, and choice under
 * concurrent membership changes only ever gives an endpoint that was active.
 */
class EndpointPoolMembershipTest {

    private final MutableClock clock = new MutableClock();

    private EndpointPool pool(String... names) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String n : names) {
            endpoints.add(endpoint(n));
        }
        // breakers never open in these tests; a probe would only answer healthy
        return new EndpointPool("test", endpoints, clock, 3, Duration.ofSeconds(10), 1000,
                e -> Uni.createFrom().item(new EndpointStatus(e, true, Optional.empty(), List.of(), Optional.empty(),
                        Map.of(), "ok")), ProbesAsTheyAre.RUNNER);
    }

    private static Endpoint endpoint(String name) {
        return Endpoint.of(name, "http://127.0.0.1:1/" + name);
    }

    private static String take(EndpointPool pool) {
        return pool.acquire(Set.of()).map(p -> p.endpoint().name()).orElse("none");
    }

    @Test
    void anAddedEndpointTakesLegsAndARetiredOneNone() {
        EndpointPool pool = pool("a");
        PooledEndpoint b = pool.add(endpoint("b"), EndpointSource.ADMIN);
        assertEquals(EndpointSource.ADMIN, b.source());
        assertEquals(List.of("a", "b"), List.of(take(pool), take(pool)));
        PooledEndpoint a = pool.retire("a").orElseThrow();
        for (int i = 0; i < 5; i++) {
            assertEquals("b", take(pool));
        }
        assertEquals(List.of(b), pool.members());
        assertEquals(List.of(a), pool.membership().retired());
        assertSame(a, pool.member("a").orElseThrow(), "a retired endpoint is still found by name, for cleanup");
        assertEquals(1, a.outstanding(), "the leg taken before the retirement still counts on it");
        a.finished(null);
        assertEquals(0, a.outstanding());
    }

    @Test
    void theLastEndpointMayBeRetiredAndThePoolIsThenEmpty() {
        EndpointPool pool = pool("a");
        pool.retire("a").orElseThrow();
        assertEquals("none", take(pool));
        assertFalse(pool.available());
        assertEquals(PoolShortage.Kind.EMPTY, pool.shortage().kind());
        assertTrue(pool.retire("a").isEmpty(), "a retired endpoint cannot be retired again");
    }

    @Test
    void aRetiredEndpointAddedBackIsTheSameOneWithItsRunningLegs() {
        EndpointPool pool = pool("a", "b");
        PooledEndpoint a = pool.member("a").orElseThrow();
        assertTrue(a.tryAcquire(10));
        pool.retire("a");
        assertSame(a, pool.add(endpoint("a"), EndpointSource.ADMIN));
        assertEquals(1, a.outstanding());
        assertTrue(pool.membership().retired().isEmpty());
    }

    @Test
    void oneNameKeepsMeaningOneEngine() {
        EndpointPool pool = pool("a");
        assertThrows(IllegalStateException.class, () -> pool.add(endpoint("a"), EndpointSource.ADMIN));
        pool.retire("a");
        assertThrows(IllegalArgumentException.class,
                () -> pool.add(Endpoint.of("a", "http://127.0.0.1:2/"), EndpointSource.ADMIN));
        assertTrue(pool.members().isEmpty(), "a refused add changes nothing");
        assertEquals(1, pool.membership().retired().size());
    }

    /** Choice reads a snapshot: whatever it gives while endpoints come and go was active at some moment. */
    @Test
    void choiceUnderChangingMembershipOnlyGivesEndpointsThatWereActive() throws InterruptedException {
        EndpointPool pool = pool("keep");
        Set<String> everActive = ConcurrentHashMap.newKeySet();
        everActive.add("keep");
        Set<String> chosen = ConcurrentHashMap.newKeySet();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(2);
        List<Throwable> failures = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            new Thread(() -> {
                try {
                    while (!stop.get()) {
                        PooledEndpoint p = pool.acquire(Set.of()).orElseThrow();
                        chosen.add(p.endpoint().name());
                        p.finished(null);
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                } finally {
                    done.countDown();
                }
            }).start();
        }
        for (int i = 0; i < 2000; i++) {
            String name = "e-" + i;
            everActive.add(name);
            pool.add(endpoint(name), EndpointSource.ADMIN);
            pool.retire(name).orElseThrow();
        }
        stop.set(true);
        done.await();
        assertTrue(failures.isEmpty(), failures.toString());
        assertTrue(everActive.containsAll(chosen), chosen.toString());
        assertEquals(List.of("keep"), pool.members().stream().map(m -> m.endpoint().name()).toList());
        assertEquals(2000, pool.membership().retired().size());
        pool.membership().retired().forEach(m -> assertEquals(0, m.outstanding(), m.endpoint().name()));
    }
}
