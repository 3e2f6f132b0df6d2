package io.handoff.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileSummaryTest {

    private static final String WARM_UP = ProfileSummaryTest.class.getName() + ".warmUp";
    private static final String MEASURED = ProfileSummaryTest.class.getName() + ".measured";

    @Test
    void theMethodThatBurnsTheCpuInTheWindowLeadsTheSummaryAndWhatCameBeforeItIsLeftOut(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("spin.jfr");
        Instant from;
        Instant to;
        try (Recording recording = new Recording()) {
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            recording.start();
            long sink = burn(ProfileSummaryTest::warmUp, Duration.ofMillis(1000));
            // a sleeping thread is not sampled: the gap keeps the windows apart whatever the clocks' rounding
            Instant warmUpEnded = Instant.now();
            Thread.sleep(40);
            from = warmUpEnded.plusMillis(20);
            sink += burn(ProfileSummaryTest::measured, Duration.ofMillis(1500));
            to = Instant.now();
            recording.stop();
            recording.dump(file);
            assertTrue(sink != 42, "keeps the loops");
        }
        assertTrue(Files.size(file) > 0);

        ProfileSummary.Summary window = ProfileSummary.read(file, from, to);
        ProfileSummary.Summary whole = ProfileSummary.read(file, Instant.MIN, Instant.MAX);

        assertTrue(window.samples() >= 20, "samples: " + window.samples());
        int measured = window.handoffInclusive().getOrDefault(MEASURED, 0);
        assertTrue(measured * 2 > window.samples(),
                MEASURED + " on " + measured + " of " + window.samples() + " stacks: " + window.handoffInclusive());
        assertEquals(0, window.handoffInclusive().getOrDefault(WARM_UP, 0), "the warm-up is outside the window");
        int handoffLayer = window.selfByLayer().getOrDefault("handoff other", 0);
        assertTrue(handoffLayer * 2 > window.samples(), "self by layer: " + window.selfByLayer());

        assertEquals(whole.samples(), window.samplesInFile(), "the file's samples are all counted once");
        assertTrue(whole.handoffInclusive().getOrDefault(WARM_UP, 0) >= 10,
                "the file holds the warm-up too: " + whole.handoffInclusive());
    }

    private interface Spin {
        long run(long seed);
    }

    private static long burn(Spin spin, Duration duration) {
        long until = System.nanoTime() + duration.toNanos();
        long sink = 0;
        while (System.nanoTime() < until) {
            sink += spin.run(sink);
        }
        return sink;
    }

    private static long warmUp(long seed) {
        return xorShift(seed);
    }

    private static long measured(long seed) {
        return xorShift(seed);
    }

    private static long xorShift(long seed) {
        long x = seed | 1;
        for (int i = 0; i < 10_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x & 1;
    }
}
