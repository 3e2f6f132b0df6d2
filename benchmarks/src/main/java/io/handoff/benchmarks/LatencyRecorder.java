package io.handoff.benchmarks;

import java.util.Arrays;

/** Every latency sample of one operation (nanoseconds), kept in full so percentiles are exact. Thread-safe. */
final class LatencyRecorder {

    private final String name;
    private long[] samples = new long[1 << 14];
    private int count;

    LatencyRecorder(String name) {
        this.name = name;
    }

    String name() {
        return name;
    }

    synchronized void record(long nanos) {
        if (count == samples.length) {
            samples = Arrays.copyOf(samples, samples.length * 2);
        }
        samples[count++] = nanos;
    }

    synchronized Percentiles.Summary summary() {
        return Percentiles.summarize(Arrays.copyOf(samples, count), count);
    }
}
