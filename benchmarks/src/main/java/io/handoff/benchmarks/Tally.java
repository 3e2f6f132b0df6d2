package io.handoff.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one target measured in one kind of phase, summed over all its measured windows: latencies of every request
 * that completed inside a window, requests and seconds for the throughput, each window's own rate, and the CPU each
 * process spent (core-seconds), so CPU per request can be stated rather than guessed.
 */
final class Tally {

    final Target target;
    final LatencyRecorder ttft;
    final LatencyRecorder total;
    final ErrorLog errors;
    /** Every request of this tally that ended, recorded or not (warm-up, settle and drain included). */
    final AtomicLong ended = new AtomicLong();
    private final List<Double> rates = new ArrayList<>();
    private final Map<String, Double> coreSeconds = new LinkedHashMap<>();
    private double seconds;
    private long requests;
    /** Start and first token of every recorded request, once {@link #keepMoments} was called. */
    private List<SchedulerHops.Request> moments;

    Tally(Target target, String phase) {
        this.target = target;
        this.ttft = new LatencyRecorder(target.name() + " TTFT");
        this.total = new LatencyRecorder(target.name() + " total");
        this.errors = new ErrorLog(phase + ", " + target.name());
    }

    /** Keeps the start and first token of each request recorded from now on ({@link #moments}). */
    synchronized void keepMoments() {
        moments = new ArrayList<>();
    }

    /** One request that completed while recording: its latencies, and its moments when they are kept. */
    synchronized void recorded(long start, long firstToken, long end) {
        ttft.record(firstToken - start);
        total.record(end - start);
        if (moments != null) {
            moments.add(new SchedulerHops.Request(start, firstToken, end));
        }
    }

    synchronized List<SchedulerHops.Request> moments() {
        return moments == null ? List.of() : List.copyOf(moments);
    }

    synchronized void window(double windowSeconds, long windowRequests, Map<String, Double> cores) {
        seconds += windowSeconds;
        requests += windowRequests;
        rates.add(windowRequests / windowSeconds);
        cores.forEach((name, c) -> {
            if (c >= 0) {
                coreSeconds.merge(name, c * windowSeconds, Double::sum);
            }
        });
    }

    synchronized double perSecond() {
        return seconds == 0 ? 0 : requests / seconds;
    }

    synchronized long requests() {
        return requests;
    }

    synchronized double seconds() {
        return seconds;
    }

    synchronized List<Double> rates() {
        return List.copyOf(rates);
    }

    /** Mean cores busy over the windows, per process. */
    synchronized Map<String, Double> cores() {
        Map<String, Double> out = new LinkedHashMap<>();
        coreSeconds.forEach((name, cs) -> out.put(name, cs / seconds));
        return out;
    }

    /** CPU milliseconds per completed request, per process. */
    synchronized Map<String, Double> cpuMillisPerRequest() {
        Map<String, Double> out = new LinkedHashMap<>();
        coreSeconds.forEach((name, cs) -> out.put(name, requests == 0 ? Double.NaN : cs * 1000 / requests));
        return out;
    }
}
