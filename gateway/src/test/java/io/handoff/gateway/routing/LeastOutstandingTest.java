package io.handoff.gateway.routing;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.handoff.gateway.routing.ChoicePools.load;
import static io.handoff.gateway.routing.ChoicePools.peek;
import static io.handoff.gateway.routing.ChoicePools.pool;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * least-outstanding as a policy object behaves as the pool always chose (EndpointPoolTest pins the pool's default):
 * the fewest outstanding wins, ties go round-robin, and a prefix key changes nothing.
 */
class LeastOutstandingTest {

    @Test
    void theFewestOutstandingWinsAndTiesTakeTurnsWhateverThePrefix() {
        EndpointPool pool = pool(new LeastOutstanding(), "a", "b", "c");
        List<String> idle = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            idle.add(peek(pool, 42L));
        }
        assertEquals(List.of("a", "b", "c", "a", "b", "c"), idle, "one prefix, yet every endpoint in turn");
        load(pool, "a", 2);
        load(pool, "c", 1);
        for (int i = 0; i < 3; i++) {
            assertEquals("b", peek(pool, 42L));
        }
    }

    @Test
    void theDefaultPolicyOfConfigurationIsLeastOutstanding() {
        RouteSettings s = RouteSettings.builder("r", "m", "vllm").build();
        assertEquals(EndpointPolicy.LEAST_OUTSTANDING, s.prefillPolicy());
        assertEquals(EndpointPolicy.LEAST_OUTSTANDING, s.decodePolicy());
    }
}
