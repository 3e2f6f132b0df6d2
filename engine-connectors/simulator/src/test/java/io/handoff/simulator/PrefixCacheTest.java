package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The prefix cache alone: leading whole blocks, chained, least recently used out first. */
class PrefixCacheTest {

    /** {@code blocks} blocks of 4 tokens, block {@code b} holding {@code base + b} four times. */
    private static int[] prompt(int base, int blocks, int extraTokens) {
        return IntStream.range(0, blocks * 4 + extraTokens).map(i -> base + i / 4).toArray();
    }

    @Test
    void aPrefillReusesTheLeadingWholeBlocksCachedBeforeIt() {
        PrefixCache cache = new PrefixCache(4, 100);
        assertEquals(0, cache.prefill(prompt(0, 3, 2)));
        assertEquals(12, cache.prefill(prompt(0, 3, 3)), "three whole blocks; the partial block is computed");
        assertEquals(12, cache.prefill(prompt(0, 5, 0)), "the first three of five");
        assertEquals(20, cache.prefill(prompt(0, 5, 0)));
        assertEquals(5, cache.size());
    }

    @Test
    void aBlockCountsOnlyAfterTheSameBlocksBeforeIt() {
        PrefixCache cache = new PrefixCache(4, 100);
        cache.prefill(prompt(0, 2, 0)); // blocks 0 and 1
        int[] shifted = IntStream.concat(IntStream.of(9, 9, 9, 9), IntStream.of(prompt(0, 2, 0))).toArray();
        assertEquals(0, cache.prefill(shifted), "the same blocks after another first block are other blocks");
    }

    @Test
    void theLeastRecentlyUsedBlocksMakeRoom() {
        PrefixCache cache = new PrefixCache(4, 4);
        cache.prefill(prompt(0, 2, 0));   // a: 2 blocks
        cache.prefill(prompt(100, 2, 0)); // b: 2 blocks, full
        assertEquals(8, cache.prefill(prompt(0, 2, 0)), "a used again: b is now the eldest");
        cache.prefill(prompt(200, 2, 0)); // c evicts b
        assertEquals(4, cache.size());
        assertEquals(8, cache.prefill(prompt(0, 2, 0)));
        assertEquals(0, cache.prefill(prompt(100, 2, 0)));
    }

    @Test
    void aCacheOfNoBlocksMissesEverythingAndAClearForgetsEverything() {
        PrefixCache none = new PrefixCache(4, 0);
        none.prefill(prompt(0, 2, 0));
        assertEquals(0, none.prefill(prompt(0, 2, 0)));
        assertEquals(0, none.size());
        PrefixCache cache = new PrefixCache(4, 10);
        cache.prefill(prompt(0, 2, 0));
        cache.clear();
        assertEquals(0, cache.prefill(prompt(0, 2, 0)));
        assertThrows(IllegalArgumentException.class, () -> new PrefixCache(0, 10));
        assertThrows(IllegalArgumentException.class, () -> new PrefixCache(4, -1));
    }
}
