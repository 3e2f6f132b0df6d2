package io.handoff.gateway.routing;

import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.TokenIds;
import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The estimate of a decode endpoint's prefix cache: what it learned per endpoint, the longest prefix held from the
 * first block on, and the bound of its least recently used blocks.
 */
class DecodeCacheEstimateTest {

    private static final int BLOCK = 4;

    /** A prompt of {@code blocks} full blocks of token ids, {@code first} to {@code first + blocks x 4 - 1}. */
    private static PromptBlocks prompt(int first, int blocks) {
        return prompt(IntStream.range(first, first + blocks * BLOCK).toArray());
    }

    private static PromptBlocks prompt(int... ids) {
        TokenIds.Builder t = TokenIds.newBuilder();
        IntStream.of(ids).forEach(t::addIds);
        return PromptBlocks.of(GenerateRequest.newBuilder().setTokenIds(t).build(), BLOCK);
    }

    private static int[] concat(int[] a, int... b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    @Test
    void anUnknownEndpointHoldsNothing() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        PromptBlocks p = prompt(0, 3);
        assertEquals(0, cache.cachedTokens("decode-0", p));
        assertEquals(12, cache.uncachedTokens("decode-0", p));
    }

    @Test
    void aForgottenEndpointHoldsNothingAndNoLongerCounts() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        cache.learned("decode-0", prompt(0, 3));
        cache.learned("decode-1", prompt(0, 3));
        cache.forget("decode-0");
        assertEquals(0, cache.cachedTokens("decode-0", prompt(0, 3)));
        assertEquals(12, cache.cachedTokens("decode-1", prompt(0, 3)));
        assertEquals(1, cache.endpoints());
    }

    @Test
    void aMovedPromptIsHeldWhereItWentAndNoLongerWhereItWasLearned() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        cache.learned("decode-0", prompt(0, 2));
        cache.learned("decode-0", prompt(100, 3));
        cache.moved("decode-0", "decode-1", prompt(100, 3));
        assertEquals(0, cache.cachedTokens("decode-0", prompt(100, 3)));
        assertEquals(12, cache.cachedTokens("decode-1", prompt(100, 3)));
        assertEquals(8, cache.cachedTokens("decode-0", prompt(0, 2)), "another prompt's blocks stay");
    }

    @Test
    void aLearnedPromptIsHeldAndALongerOneSharingItsStartHasOnlyItsNewTokensUncached() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        int[] ids = IntStream.range(100, 112).toArray(); // three blocks
        cache.learned("decode-0", prompt(ids));
        assertEquals(0, cache.uncachedTokens("decode-0", prompt(ids)));
        // three more tokens, a partial block: only they are uncached
        assertEquals(3, cache.uncachedTokens("decode-0", prompt(concat(ids, 7, 8, 9))));
        // a prompt that leaves the learned one in its second block holds its first block only
        int[] diverging = ids.clone();
        diverging[5] = -1;
        assertEquals(4, cache.cachedTokens("decode-0", prompt(diverging)));
        // a different first block: nothing, even though later blocks have the same tokens
        int[] otherStart = ids.clone();
        otherStart[0] = -1;
        assertEquals(0, cache.cachedTokens("decode-0", prompt(otherStart)));
    }

    @Test
    void eachEndpointHoldsOnlyWhatWasLearnedOnIt() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        cache.learned("decode-0", prompt(0, 2));
        cache.learned("decode-1", prompt(1000, 3));
        assertEquals(8, cache.cachedTokens("decode-0", prompt(0, 2)));
        assertEquals(0, cache.cachedTokens("decode-1", prompt(0, 2)));
        assertEquals(12, cache.cachedTokens("decode-1", prompt(1000, 3)));
        assertEquals(0, cache.cachedTokens("decode-0", prompt(1000, 3)));
    }

    @Test
    void theLeastRecentlyLearnedBlocksGoFirstWhenTheCacheIsFull() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(16, BLOCK); // four blocks
        PromptBlocks a = prompt(0, 2);
        PromptBlocks b = prompt(1000, 2);
        PromptBlocks c = prompt(2000, 2);
        cache.learned("decode-0", a);
        cache.learned("decode-0", b);
        assertEquals(8, cache.cachedTokens("decode-0", a));
        cache.learned("decode-0", a); // a used again: b is now the least recent
        cache.learned("decode-0", c);
        assertEquals(8, cache.cachedTokens("decode-0", a));
        assertEquals(0, cache.cachedTokens("decode-0", b));
        assertEquals(8, cache.cachedTokens("decode-0", c));
    }

    @Test
    void aLookupIsNotAUse() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(16, BLOCK);
        PromptBlocks a = prompt(0, 2);
        PromptBlocks b = prompt(1000, 2);
        cache.learned("decode-0", a);
        cache.learned("decode-0", b);
        assertEquals(8, cache.cachedTokens("decode-0", a)); // looked up, not sent there
        cache.learned("decode-0", prompt(2000, 2));
        assertEquals(0, cache.cachedTokens("decode-0", a), "a was still the least recently learned");
        assertEquals(8, cache.cachedTokens("decode-0", b));
    }

    @Test
    void aPromptLongerThanTheCacheKeepsItsFirstBlocks() {
        DecodeCacheEstimate cache = new DecodeCacheEstimate(12, BLOCK); // three blocks
        PromptBlocks longOne = prompt(0, 5);
        cache.learned("decode-0", longOne);
        assertEquals(12, cache.cachedTokens("decode-0", longOne));
        assertEquals(8, cache.uncachedTokens("decode-0", longOne));
    }

    @Test
    void aCacheOfLessThanOneBlockOrBlocksOfAnotherSizeAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new DecodeCacheEstimate(3, BLOCK));
        assertThrows(IllegalArgumentException.class, () -> new DecodeCacheEstimate(0, BLOCK));
        DecodeCacheEstimate cache = new DecodeCacheEstimate(64, BLOCK);
        PromptBlocks otherSize = PromptBlocks.of(GenerateRequest.newBuilder().setPrompt("p".repeat(64)).build(), 8);
        assertThrows(IllegalArgumentException.class, () -> cache.learned("decode-0", otherSize));
        assertThrows(IllegalArgumentException.class, () -> cache.cachedTokens("decode-0", otherSize));
    }
}
