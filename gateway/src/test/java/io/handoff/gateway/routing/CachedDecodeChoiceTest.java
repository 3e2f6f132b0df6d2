package io.handoff.gateway.routing;

import io.handoff.openengine.v1.GenerateRequest;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static io.handoff.gateway.routing.ChoicePools.load;
import static io.handoff.gateway.routing.ChoicePools.pool;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A decode pool choosing for the uncached-prompt bypass ({@link EndpointPool#acquireCached}): the endpoint holding
 * the longest prefix of the prompt, unless it is above the load bound; the pool's own choice when none holds any.
 */
class CachedDecodeChoiceTest {

    private static final double LOAD_BOUND = 1.25;

    private static PromptBlocks prompt(String text) {
        return PromptBlocks.of(GenerateRequest.newBuilder().setPrompt(text).build(), ChoicePools.PREFIX.blockTokens());
    }

    /** The endpoint a leg for the prompt gets, given back at once so that the loads stay as they were. */
    private static String peek(EndpointPool pool, DecodeCacheEstimate cache, PromptBlocks prompt) {
        Optional<PooledEndpoint> chosen = pool.acquireCached(m -> cache.cachedTokens(m.endpoint().name(), prompt),
                LOAD_BOUND);
        chosen.ifPresent(PooledEndpoint::giveBack);
        return chosen.map(p -> p.endpoint().name()).orElse("none");
    }

    @Test
    void theEndpointHoldingTheLongestPrefixIsChosenUntilItIsAboveTheLoadBound() {
        EndpointPool pool = pool(new LeastOutstanding(), "a", "b", "c");
        DecodeCacheEstimate cache = new DecodeCacheEstimate(262144, ChoicePools.PREFIX.blockTokens());
        String document = "a shared document of the tenant, ".repeat(40);
        cache.learned("b", prompt(document.substring(0, 256)));
        cache.learned("c", prompt(document));
        PromptBlocks question = prompt(document + "and a question about it?");

        assertEquals("c", peek(pool, cache, question), "c holds the whole document, b a quarter of it");
        // c 2, a and b 0: the bound is ceil(1.25 x (2 + 1) / 3) = 2, this request counted
        load(pool, "c", 2);
        assertEquals("b", peek(pool, cache, question), "c is at the bound: the next longest prefix");
        // c 3, b 3, a 0: the bound is ceil(1.25 x 7 / 3) = 3
        load(pool, "c", 1);
        load(pool, "b", 3);
        assertEquals("a", peek(pool, cache, question), "every holder is at the bound: the pool's own choice");
    }

    @Test
    void aPromptNoEndpointHoldsGetsThePoolsOwnChoice() {
        EndpointPool pool = pool(new LeastOutstanding(), "a", "b");
        DecodeCacheEstimate cache = new DecodeCacheEstimate(262144, ChoicePools.PREFIX.blockTokens());
        cache.learned("a", prompt("x".repeat(1000)));
        load(pool, "a", 1);
        assertEquals("b", peek(pool, cache, prompt("y".repeat(1000))), "least outstanding");
    }
}
