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
            // burnt until the recording holds the samples, not for a fixed time: under load the sampler of a
            // JVM's first recording may start late (CI once saw one sample of a second's warm-up)
            long sink = burnUntilSampled(ProfileSummaryTest::warmUp, WARM_UP, 10, Instant.MIN, recording, dir);
            // a sleeping thread is not sampled: the gap keeps the windows apart whatever the clocks' rounding
            Instant warmUpEnded = Instant.now();
            Thread.sleep(40);
            from = warmUpEnded.plusMillis(20);
            sink += burnUntilSampled(ProfileSummaryTest::measured, MEASURED, 40, from, recording, dir);
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

    /** Runs {@code spin} until the recording holds {@code samples} samples of {@code method} since {@code from}. */
    private static long burnUntilSampled(Spin spin, String method, int samples, Instant from, Recording recording,
            Path dir) throws Exception {
        Path sofar = dir.resolve("so-far.jfr");
        long sink = 0;
        for (int round = 0; round < 300; round++) {
            sink += burn(spin, Duration.ofMillis(200));
            recording.dump(sofar);
            if (ProfileSummary.read(sofar, from, Instant.MAX).handoffInclusive().getOrDefault(method, 0) >= samples) {
                return sink;
            }
        }
        throw new AssertionError("the sampler took fewer than " + samples + " samples of " + method + " in a minute");
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
