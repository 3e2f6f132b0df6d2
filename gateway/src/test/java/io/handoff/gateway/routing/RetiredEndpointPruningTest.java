package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.gateway.testing.MutableClock;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pool lets go of a retired endpoint only once no leg has run on it for the time it is kept, counted from the last
 * leg's end and never from before it; finding one changes nothing, and letting it go checks again; its name may then
 * join again, even at another address; and however many endpoints come and go, the retired ones stay few.
 */
class RetiredEndpointPruningTest {

    private static final Duration KEEP = Duration.ofMinutes(15);
    private static final Duration JUST_BEFORE = KEEP.minusMillis(1);

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    private EndpointPool pool(String... names) {
        return new EndpointPool("route/decode", List.of(names).stream().map(RetiredEndpointPruningTest::endpoint)
                .toList(), clock, 3, Duration.ofSeconds(10), 1000,
                e -> Uni.createFrom().item(new EndpointStatus(e, true, Optional.empty(), List.of(), Optional.empty(),
                        Map.of(), "ok")), ProbesAsTheyAre.RUNNER);
    }

    private static Endpoint endpoint(String name) {
        return Endpoint.of(name, "http://127.0.0.1:1/" + name);
    }

    private List<PooledEndpoint> prunable(EndpointPool pool) {
        return pool.prunable(clock.instant(), KEEP);
    }

    @Test
    void anEndpointWithARunningLegIsKeptHoweverLongAndThenForTheWholeKeepAfterTheLegEnded() {
        EndpointPool pool = pool("a", "b");
        PooledEndpoint a = pool.acquire(Set.of()).orElseThrow();
        assertEquals("a", a.endpoint().name());
        pool.retire("a").orElseThrow();
        assertEquals(Optional.of(clock.instant()), a.retiredAt());
        assertEquals(Optional.empty(), a.quietSince(), "a leg runs on it");

        clock.advance(KEEP.multipliedBy(10));
        assertEquals(List.of(), prunable(pool), "a leg still runs on it");
        assertFalse(pool.prune(a, clock.instant(), KEEP));

        a.finished(null);
        Instant legEnded = clock.instant();
        assertEquals(List.of(), prunable(pool), "the keep counts from the leg's end, not from the retirement");
        assertEquals(Optional.of(legEnded), a.quietSince());
        clock.advance(JUST_BEFORE);
        assertEquals(List.of(), prunable(pool), "never early");
        assertSame(a, pool.member("a").orElseThrow(), "what is owed on it still resolves");
        clock.advance(Duration.ofMillis(1));
        assertEquals(List.of(a), prunable(pool));
        assertSame(a, pool.member("a").orElseThrow(), "finding changes nothing");

        assertTrue(pool.prune(a, clock.instant(), KEEP));
        assertTrue(pool.member("a").isEmpty());
        assertEquals(List.of(), pool.membership().retired());
        assertEquals(List.of("b"), pool.members().stream().map(m -> m.endpoint().name()).toList());
    }

    @Test
    void anEndpointRetiredIdleIsKeptForTheKeepFromItsRetirement() {
        EndpointPool pool = pool("a", "b");
        PooledEndpoint a = pool.retire("a").orElseThrow();
        assertEquals(a.retiredAt(), a.quietSince());
        clock.advance(JUST_BEFORE);
        assertEquals(List.of(), prunable(pool));
        clock.advance(Duration.ofMillis(1));
        assertEquals(List.of(a), prunable(pool));
    }

    /** A choice that read the pool just before the retirement may still start a leg there, after the window began. */
    @Test
    void aLegThatStartedAndEndedAfterTheWindowBeganStartsItAgain() {
        EndpointPool pool = pool("a");
        PooledEndpoint a = pool.retire("a").orElseThrow();
        clock.advance(Duration.ofMinutes(5));
        assertTrue(a.tryAcquire(10), "a late leg");
        a.finished(null);
        Instant lateLegEnded = clock.instant();
        clock.advance(KEEP.minus(Duration.ofMinutes(5)));
        assertEquals(List.of(), prunable(pool), "the window noted at the retirement is stale");
        assertEquals(Optional.of(clock.instant()), a.quietSince(), "it starts again at the look that saw the end");
        assertTrue(a.quietSince().orElseThrow().isAfter(lateLegEnded));
        clock.advance(JUST_BEFORE);
        assertEquals(List.of(), prunable(pool));
        clock.advance(Duration.ofMillis(1));
        assertEquals(List.of(a), prunable(pool));
    }

    @Test
    void anEndpointTakenBackAfterItWasFoundIsNotLetGo() {
        EndpointPool pool = pool("a");
        PooledEndpoint a = pool.retire("a").orElseThrow();
        clock.advance(KEEP);
        assertEquals(List.of(a), prunable(pool));
        assertSame(a, pool.add(endpoint("a"), EndpointSource.ADMIN), "taken back as it was");
        assertFalse(pool.prune(a, clock.instant(), KEEP), "acting checks again");
        assertEquals(List.of(a), pool.members());
        assertEquals(Optional.empty(), a.retiredAt());

        // retired again: its window starts anew
        pool.retire("a");
        clock.advance(JUST_BEFORE);
        assertEquals(List.of(), prunable(pool));
    }

    @Test
    void aNameLetGoMayJoinAgainEvenAtAnotherAddress() {
        EndpointPool pool = pool("a");
        PooledEndpoint a = pool.retire("a").orElseThrow();
        Endpoint moved = Endpoint.of("a", "http://127.0.0.1:2/");
        try {
            pool.add(moved, EndpointSource.KUBERNETES);
            throw new AssertionError("a retired name kept its address while something may be owed on it");
        } catch (IllegalArgumentException expected) {
            // one name, one engine, while it is kept
        }
        clock.advance(KEEP);
        assertTrue(pool.prune(prunable(pool).get(0), clock.instant(), KEEP));

        PooledEndpoint again = pool.add(moved, EndpointSource.KUBERNETES);
        assertNotSame(a, again);
        assertEquals(moved, again.endpoint());
        assertEquals(0, again.outstanding());
        assertEquals(Optional.empty(), again.retiredAt());
        assertEquals("a", pool.acquire(Set.of()).orElseThrow().endpoint().name(), "it takes legs");
    }

    /** Pods come and go under new names for days: what a pool keeps of them is bounded by what one keep sees. */
    @Test
    void theRetiredListStaysBoundedAcrossManyComingsAndGoings() {
        EndpointPool pool = pool("keep");
        Duration between = Duration.ofMinutes(1);
        int mostRetired = 0;
        for (int i = 0; i < 2000; i++) {
            String name = "pod-" + i;
            pool.add(endpoint(name), EndpointSource.KUBERNETES);
            PooledEndpoint leg = pool.acquire(Set.of()).orElseThrow();
            pool.retire(name);
            leg.finished(null);
            clock.advance(between);
            for (PooledEndpoint due : prunable(pool)) {
                assertTrue(pool.prune(due, clock.instant(), KEEP));
            }
            mostRetired = Math.max(mostRetired, pool.membership().retired().size());
        }
        long perKeep = KEEP.dividedBy(between);
        assertTrue(mostRetired <= perKeep + 1, "retired endpoints kept at once: " + mostRetired);
        assertEquals(List.of("keep"), pool.members().stream().map(m -> m.endpoint().name()).toList());
        clock.advance(KEEP);
        prunable(pool).forEach(due -> pool.prune(due, clock.instant(), KEEP));
        assertEquals(List.of(), pool.membership().retired());
    }
}
