package io.handoff.benchmarks;

/** Prompt tokens the prefill engines found in their prefix cache ({@code hit}) and those they computed. */
record PrefixTokens(long hit, long miss) {

    static final PrefixTokens NONE = new PrefixTokens(0, 0);

    PrefixTokens minus(PrefixTokens earlier) {
        return new PrefixTokens(hit - earlier.hit, miss - earlier.miss);
    }

    PrefixTokens plus(PrefixTokens other) {
        return new PrefixTokens(hit + other.hit, miss + other.miss);
    }

    /** The share of prompt tokens that were cached; NaN when no prefill ran. */
    double hitRate() {
        long all = hit + miss;
        return all == 0 ? Double.NaN : (double) hit / all;
    }
}
