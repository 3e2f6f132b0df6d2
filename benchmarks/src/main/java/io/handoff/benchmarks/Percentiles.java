package io.handoff.benchmarks;

import java.util.Arrays;

/**
 * Percentiles by the nearest-rank method: the p-th percentile of n sorted samples is the sample at rank
 * {@code ceil(p / 100 * n)} (1-based), so it is always a value that was actually measured.
 */
public final class Percentiles {

    private Percentiles() {
    }

    /** The p-th percentile (0 &lt; p &lt;= 100) of samples that are already sorted ascending. */
    public static long nearestRank(long[] sorted, int count, double p) {
        if (count <= 0) {
            throw new IllegalArgumentException("no samples");
        }
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        }
        long rank = (long) Math.ceil(p / 100.0 * count);
        int index = (int) Math.min(Math.max(rank, 1), count) - 1;
        return sorted[index];
    }

    /** Summary of unsorted samples (nanoseconds); the array's first {@code count} entries are sorted in place. */
    public static Summary summarize(long[] samples, int count) {
        if (count == 0) {
            return Summary.EMPTY;
        }
        Arrays.sort(samples, 0, count);
        long sum = 0;
        for (int i = 0; i < count; i++) {
            sum += samples[i];
        }
        return new Summary(count, nearestRank(samples, count, 50), nearestRank(samples, count, 99),
                samples[count - 1], (double) sum / count);
    }

    /** Count and latencies in nanoseconds. */
    public record Summary(long count, long p50, long p99, long max, double mean) {

        static final Summary EMPTY = new Summary(0, 0, 0, 0, 0);

        public double p50Millis() {
            return p50 / 1e6;
        }

        public double p99Millis() {
            return p99 / 1e6;
        }

        public double maxMillis() {
            return max / 1e6;
        }
    }
}
