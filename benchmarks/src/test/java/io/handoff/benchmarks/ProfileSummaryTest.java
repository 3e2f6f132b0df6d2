package io.handoff.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileSummaryTest {

    @Test
    void theMethodThatBurnsTheCpuLeadsTheSummary(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("spin.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            recording.start();
            long until = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            long sink = 0;
            while (System.nanoTime() < until) {
                sink += spin(sink);
            }
            recording.stop();
            recording.dump(file);
            assertTrue(sink != 42, "keeps the loop");
        }
        assertTrue(Files.size(file) > 0);

        ProfileSummary.Summary summary = ProfileSummary.read(file);

        String spin = ProfileSummaryTest.class.getName() + ".spin";
        assertTrue(summary.samples() >= 20, "samples: " + summary.samples());
        int spinInclusive = summary.handoffInclusive().getOrDefault(spin, 0);
        assertTrue(spinInclusive * 2 > summary.samples(),
                spin + " on " + spinInclusive + " of " + summary.samples() + " stacks: " + summary.handoffInclusive());
        int handoffLayer = summary.selfByLayer().getOrDefault("handoff other", 0);
        assertTrue(handoffLayer * 2 > summary.samples(), "self by layer: " + summary.selfByLayer());
    }

    private static long spin(long seed) {
        long x = seed | 1;
        for (int i = 0; i < 10_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x & 1;
    }
}
