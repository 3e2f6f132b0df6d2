package io.handoff.gateway.routing;

import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static io.handoff.gateway.routing.ChoicePools.endpoint;
import static io.handoff.gateway.routing.ChoicePools.load;
import static io.handoff.gateway.routing.ChoicePools.peek;
import static io.handoff.gateway.routing.ChoicePools.pool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * prefix-affinity: consistent hashing with bounded loads over the prompt's first blocks. One prefix keeps one
 * endpoint, distinct prefixes spread, a join or a retirement moves only the prefixes of the arcs it changes, and a hot
 * prefix spills to the next endpoint on the ring when its own is above the bound.
 */
class PrefixAffinityTest {

    private static final int PREFIXES = 2000;

    private static EndpointPool affinity(String... names) {
        return pool(new PrefixAffinity(1.25), names);
    }

    /** The key of a prompt: a distinct document of 600 characters (past the 512 the key reads) and a suffix. */
    private static long key(int document, String suffix) {
        String head = ("document " + document + " ").repeat(60).substring(0, 600);
        return ChoicePools.PREFIX.keyOf(GenerateRequest.newBuilder().setPrompt(head + suffix).build());
    }

    private static Map<Integer, String> placement(EndpointPool pool) {
        Map<Integer, String> out = new HashMap<>();
        for (int d = 0; d < PREFIXES; d++) {
            out.put(d, peek(pool, key(d, "")));
        }
        return out;
    }

    @Test
    void onePrefixGoesToOneEndpointWhateverFollowsIt() {
        EndpointPool pool = affinity("a", "b", "c", "d");
        for (int d = 0; d < 20; d++) {
            Set<String> chosen = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                chosen.add(peek(pool, key(d, " question " + i)));
            }
            assertEquals(1, chosen.size(), "document " + d + " went to " + chosen);
        }
    }

    @Test
    void distinctPrefixesSpreadOverTheEndpoints() {
        Map<String, Integer> count = new TreeMap<>();
        placement(affinity("a", "b", "c", "d")).values().forEach(e -> count.merge(e, 1, Integer::sum));
        assertEquals(Set.of("a", "b", "c", "d"), count.keySet());
        // a quarter each is 500; 100 points per endpoint keep each within a fifth of it
        count.values().forEach(n -> assertTrue(n > 400 && n < 600, "uneven: " + count));
    }

    @Test
    void aJoiningEndpointTakesAboutOneFifthOfFivePrefixesFromTheOthersAndMovesNothingElse() {
        EndpointPool pool = affinity("a", "b", "c", "d");
        Map<Integer, String> before = placement(pool);
        pool.add(endpoint("e"), EndpointSource.ADMIN);
        Map<Integer, String> after = placement(pool);
        int moved = 0;
        for (int d = 0; d < PREFIXES; d++) {
            if (!before.get(d).equals(after.get(d))) {
                moved++;
                assertEquals("e", after.get(d), "document " + d + " moved between old endpoints");
            }
        }
        double share = moved / (double) PREFIXES;
        assertTrue(share > 0.12 && share < 0.28, "moved " + share + " of the prefixes, not about 1/5");
    }

    @Test
    void aRetiredEndpointsPrefixesMoveAndNoOthers() {
        EndpointPool pool = affinity("a", "b", "c", "d");
        Map<Integer, String> before = placement(pool);
        pool.retire("b").orElseThrow();
        Map<Integer, String> after = placement(pool);
        int moved = 0;
        for (int d = 0; d < PREFIXES; d++) {
            if (before.get(d).equals("b")) {
                moved++;
                assertNotEquals("b", after.get(d));
            } else {
                assertEquals(before.get(d), after.get(d), "document " + d + " moved though its endpoint stayed");
            }
        }
        assertTrue(moved > 0.15 * PREFIXES && moved < 0.35 * PREFIXES, "b had " + moved + " prefixes");
        pool.add(endpoint("b"), EndpointSource.ADMIN);
        assertEquals(before, placement(pool), "b back under its name takes its arcs back");
    }

    @Test
    void aHotPrefixSpillsToTheNextEndpointOnTheRingWhileItsOwnIsAboveTheBound() {
        EndpointPool pool = affinity("a", "b", "c");
        long hot = key(7, "");
        String home = peek(pool, hot);
        // three outstanding on home, none elsewhere: the bound is ceil(1.25 x (3 + 1) / 3) = 2
        load(pool, home, 3);
        String spill = peek(pool, hot);
        assertNotEquals(home, spill);
        for (int i = 0; i < 5; i++) {
            assertEquals(spill, peek(pool, hot), "the spill goes to the same next endpoint each time");
        }
        // with the others as busy, home is within the bound again: ceil(1.25 x (3 + 2 + 2 + 1) / 3) = 4
        for (String other : List.of("a", "b", "c")) {
            if (!other.equals(home)) {
                load(pool, other, 2);
            }
        }
        assertEquals(home, peek(pool, hot));
    }

    @Test
    void anEndpointThatCannotTakeTheLegPassesItOnAndARequestWithoutPrefixIsLeastOutstanding() {
        EndpointPool pool = affinity("a", "b", "c");
        long k = key(3, "");
        String home = peek(pool, k);
        String next = peek(pool, k, Set.of(endpoint(home)));
        assertNotEquals(home, next);
        assertNotEquals("none", next);
        load(pool, home, ChoicePools.MAX_OUTSTANDING);
        assertEquals(next, peek(pool, k), "a full home passes the leg on as an excluded one does");

        EndpointPool idle = affinity("a", "b", "c");
        assertEquals(List.of("a", "b", "c"), List.of(peek(idle, EndpointChoice.NO_PREFIX),
                peek(idle, EndpointChoice.NO_PREFIX), peek(idle, EndpointChoice.NO_PREFIX)));
    }
}
