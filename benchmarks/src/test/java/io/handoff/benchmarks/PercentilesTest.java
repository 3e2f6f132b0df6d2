package io.handoff.benchmarks;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PercentilesTest {

    @Test
    void nearestRankOfOneToHundred() {
        long[] sorted = new long[100];
        for (int i = 0; i < 100; i++) {
            sorted[i] = i + 1;
        }
        assertEquals(50, Percentiles.nearestRank(sorted, 100, 50));
        assertEquals(99, Percentiles.nearestRank(sorted, 100, 99));
        assertEquals(100, Percentiles.nearestRank(sorted, 100, 100));
        assertEquals(1, Percentiles.nearestRank(sorted, 100, 0.5));
    }

    @Test
    void smallSamplesRoundRankUp() {
        long[] sorted = {10, 20, 30};
        assertEquals(20, Percentiles.nearestRank(sorted, 3, 50)); // ceil(1.5) = 2
        assertEquals(30, Percentiles.nearestRank(sorted, 3, 99)); // ceil(2.97) = 3
        assertEquals(10, Percentiles.nearestRank(new long[] {10}, 1, 99));
    }

    @Test
    void summarizeSortsUnorderedSamples() {
        long[] samples = {5_000_000, 1_000_000, 3_000_000, 2_000_000, 4_000_000};
        Percentiles.Summary s = Percentiles.summarize(samples, samples.length);
        assertEquals(5, s.count());
        assertEquals(3_000_000, s.p50());
        assertEquals(5_000_000, s.p99());
        assertEquals(5_000_000, s.max());
        assertEquals(3_000_000.0, s.mean());
        assertEquals(3.0, s.p50Millis());
    }

    @Test
    void rejectsEmptyAndOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> Percentiles.nearestRank(new long[0], 0, 50));
        assertThrows(IllegalArgumentException.class, () -> Percentiles.nearestRank(new long[] {1}, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> Percentiles.nearestRank(new long[] {1}, 1, 101));
        assertEquals(0, Percentiles.summarize(new long[0], 0).count());
    }
}
