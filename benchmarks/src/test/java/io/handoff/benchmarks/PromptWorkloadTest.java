package io.handoff.benchmarks;

import io.handoff.simulator.Tokenizer;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.function.LongFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The prompts, read by the simulators' own tokenizer: the token counts and the sharing the report relies on. */
class PromptWorkloadTest {

    private static final PromptWorkload SHARED = PromptWorkload.sharedPrefix(4, 300, 40);

    @Test
    void everyPromptHasThePromptTokensAndRequestsOfOnePrefixShareExactlyIt() {
        LongFunction<String> prompts = SHARED.prompts(7);
        Set<String> prefixes = new HashSet<>();
        for (long n = 1; n <= 64; n++) {
            int[] ids = Tokenizer.encode(prompts.apply(n));
            assertEquals(340, ids.length);
            prefixes.add(Arrays.toString(Arrays.copyOf(ids, 300)));
        }
        assertEquals(4, prefixes.size(), "64 requests spread over the 4 prefixes");
        int[] a = Tokenizer.encode(prompts.apply(1));
        int[] b = sameprefixAs(prompts, a);
        assertArrayEquals(Arrays.copyOf(a, 300), Arrays.copyOf(b, 300));
        assertFalse(Arrays.equals(Arrays.copyOfRange(a, 300, 340), Arrays.copyOfRange(b, 300, 340)),
                "each request has a suffix of its own");
    }

    @Test
    void anotherPhaseSharesNoPrefixAndUniquePromptsShareNothing() {
        int[] first = Tokenizer.encode(SHARED.prompts(1).apply(5));
        int[] second = Tokenizer.encode(SHARED.prompts(2).apply(5));
        assertFalse(Arrays.equals(Arrays.copyOf(first, 16), Arrays.copyOf(second, 16)));

        PromptWorkload unique = SHARED.unique();
        LongFunction<String> prompts = unique.prompts(1);
        int[] x = Tokenizer.encode(prompts.apply(1));
        int[] y = Tokenizer.encode(prompts.apply(2));
        assertEquals(340, x.length);
        assertFalse(Arrays.equals(Arrays.copyOf(x, 16), Arrays.copyOf(y, 16)));
    }

    private static int[] sameprefixAs(LongFunction<String> prompts, int[] a) {
        for (long n = 2; ; n++) {
            int[] ids = Tokenizer.encode(prompts.apply(n));
            if (Arrays.equals(Arrays.copyOf(a, 300), Arrays.copyOf(ids, 300))) {
                return ids;
            }
        }
    }
}
