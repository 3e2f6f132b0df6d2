package io.handoff.benchmarks;

import java.util.function.LongFunction;

/**
 * Prompts of the policy comparison (issue 15), built of words of at most 4 characters so that the simulators'
 * tokenizer reads each word as exactly one token. A shared-prefix workload gives each request one of
 * {@code prefixes} fixed prefixes of {@code prefixTokens} tokens, chosen by the request number, followed by
 * {@code suffixTokens} tokens of its own; the unique workload gives every request {@code prefixTokens +
 * suffixTokens} tokens of its own, so both send prompts of the same length. The salt keeps the prefixes of one phase
 * apart from every other phase's: each phase starts with caches that hold none of its prefixes.
 */
record PromptWorkload(String name, int prefixes, int prefixTokens, int suffixTokens) {

    /** Distinct words of 4 base-36 characters. */
    private static final long WORDS = 36L * 36 * 36 * 36;

    static PromptWorkload sharedPrefix(int prefixes, int prefixTokens, int suffixTokens) {
        return new PromptWorkload("shared prefix", prefixes, prefixTokens, suffixTokens);
    }

    /** The same prompt length with nothing shared. */
    PromptWorkload unique() {
        return new PromptWorkload("unique prompts", 0, 0, prefixTokens + suffixTokens);
    }

    int promptTokens() {
        return prefixTokens + suffixTokens;
    }

    /** The prompt of request {@code n} in the phase that has this salt. */
    LongFunction<String> prompts(long salt) {
        return n -> {
            StringBuilder text = new StringBuilder(5 * promptTokens());
            if (prefixes > 0) {
                long prefix = Math.floorMod(mix(n), prefixes);
                appendWords(text, mix(salt * 1_000_003L + prefix), prefixTokens);
            }
            appendWords(text, mix(~(salt * 1_000_003L + n)), suffixTokens);
            return text.toString().strip();
        };
    }

    /** Words of 4 base-36 characters drawn from a generator seeded with {@code seed}: one token each. */
    private static void appendWords(StringBuilder text, long seed, int words) {
        long state = seed;
        for (int i = 0; i < words; i++) {
            state = mix(state + i);
            // a leading 1 keeps every word 4 digits long once it is cut off
            text.append(' ').append(Long.toString(WORDS + Math.floorMod(state, WORDS), 36), 1, 5);
        }
    }

    /** SplitMix64's finaliser: spreads consecutive numbers over the whole range. */
    private static long mix(long x) {
        long z = x + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
