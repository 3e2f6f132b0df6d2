package io.handoff.gateway.routing;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;

import static io.handoff.gateway.routing.ChoicePools.endpoint;
import static io.handoff.gateway.routing.ChoicePools.load;
import static io.handoff.gateway.routing.ChoicePools.peek;
import static io.handoff.gateway.routing.ChoicePools.pool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** power-of-two: the less loaded of two distinct admissible endpoints drawn at random (draws scripted here). */
class PowerOfTwoTest {

    /** Draws that answer the scripted indices in order and record the bounds they were asked for. */
    private static final class Script implements IntUnaryOperator {
        final ArrayDeque<Integer> answers = new ArrayDeque<>();
        final List<Integer> bounds = new ArrayList<>();

        Script(int... indices) {
            for (int i : indices) {
                answers.add(i);
            }
        }

        @Override
        public int applyAsInt(int bound) {
            bounds.add(bound);
            int index = answers.remove();
            assertTrue(index < bound, "scripted index " + index + " is not below " + bound);
            return index;
        }
    }

    @Test
    void theLessLoadedOfTheTwoDrawnWinsNotTheLeastLoadedOfAll() {
        Script draws = new Script(0, 1, 0, 1);
        EndpointPool pool = pool(new PowerOfTwo(draws), "a", "b", "c");
        load(pool, "a", 3);
        load(pool, "c", 1);
        // first draw a (index 0), second index 1 of the other two: c; b (idle) was not drawn
        assertEquals("c", peek(pool, 0));
        load(pool, "c", 4);
        assertEquals("a", peek(pool, 0), "a (3) is now below c (5)");
        assertEquals(List.of(3, 2, 3, 2), draws.bounds, "two distinct draws among the three admissible");
    }

    @Test
    void aTieGoesToTheFirstDrawn() {
        EndpointPool pool = pool(new PowerOfTwo(new Script(2, 0)), "a", "b", "c");
        assertEquals("c", peek(pool, 0));
    }

    @Test
    void onlyAdmissibleEndpointsAreDrawn() {
        Script draws = new Script(0, 0);
        EndpointPool pool = pool(new PowerOfTwo(draws), "a", "b", "c");
        load(pool, "b", ChoicePools.MAX_OUTSTANDING); // full
        load(pool, "c", 1);
        // a is excluded and b full: the draws are among [c] alone, so none is needed
        assertEquals("c", peek(pool, 0, Set.of(endpoint("a"))));
        assertEquals(List.of(), draws.bounds);
        // a and c admissible: index 0 is a, the second draw's 0 skips over it to c
        assertEquals("a", peek(pool, 0));
        assertEquals(List.of(2, 1), draws.bounds);
        load(pool, "a", ChoicePools.MAX_OUTSTANDING);
        load(pool, "c", ChoicePools.MAX_OUTSTANDING);
        assertEquals("none", peek(pool, 0));
    }

    @Test
    void seededDrawsOverIdleEndpointsReachEveryEndpoint() {
        Random seeded = new Random(7);
        EndpointPool pool = pool(new PowerOfTwo(seeded::nextInt), "a", "b", "c", "d");
        Map<String, Integer> chosen = new TreeMap<>();
        for (int i = 0; i < 400; i++) {
            chosen.merge(peek(pool, 0), 1, Integer::sum);
        }
        assertEquals(Set.of("a", "b", "c", "d"), chosen.keySet());
        chosen.values().forEach(n -> assertTrue(n > 50, "uneven: " + chosen));
    }
}
