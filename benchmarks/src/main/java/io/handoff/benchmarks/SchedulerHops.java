package io.handoff.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the time to first token goes at one request in flight, hop by hop, read from the kernel's scheduler rather
 * than from any process's own account: {@code perf sched record} notes each time a thread wakes another, and at one
 * request in flight every process sleeps between two hops, so a process's bytes reaching the next show as a wake-up of
 * the next one. A hop is the time between two such wake-ups, for example the gateway's intake: from the client's
 * request waking the gateway to the gateway waking the prefill engine with its leg.
 *
 * <p>Needs {@code perf} (Debian's {@code linux-perf}) and the right to trace the scheduler (root, or
 * {@code kernel.perf_event_paranoid=-1}). Times are on {@code CLOCK_MONOTONIC} ({@code perf -k mono}), the clock of
 * {@link System#nanoTime()} on Linux, so they line up with the driver's own times of each request.
 */
final class SchedulerHops {

    /**
     * Thread {@code wakerThread} of process {@code waker} woke thread {@code wakeeThread} of process {@code wakee};
     * {@code betweenEventLoops} when both threads are Vert.x event loops.
     */
    record Wake(long nanos, long waker, long wakee, long wakerThread, long wakeeThread, boolean betweenEventLoops) {
    }

    /** How perf names a Vert.x event loop thread: its name cut to the kernel's 15 characters. */
    private static final String EVENT_LOOP = "vert.x-eventloo";

    /** One request as the driver timed it ({@link System#nanoTime()}): sent, first token read, stream ended. */
    record Request(long start, long firstToken, long end) {
    }

    /**
     * The hops of one request's time to first token, in nanoseconds, which add up to it, and of the rest of its stream.
     * Through a proxy (the gateway) all are measured; sent direct, the client is its own proxy, and {@code toProxy} and
     * {@code relay} are zero.
     *
     * @param toProxy     the client's request until it woke the gateway
     * @param intake      until the client (direct) or the gateway woke an engine with the prefill leg
     * @param prefill     until the prefill engine's answer woke the one that sent it
     * @param handoff     until that one woke an engine with the decode leg
     * @param firstEvent  until the decode engine's first token woke the one that sent the leg
     * @param relay       until the gateway woke the client with that token
     * @param toClient    until the client's own reading of the token
     * @param decodeRest  from the first token's wake-up of the proxy to the decode engine's last one (its end)
     * @param ending      from there until the client saw the stream end
     */
    record Hops(long toProxy, long intake, long prefill, long handoff, long firstEvent, long relay, long toClient,
            long decodeRest, long ending) {
        long[] asArray() {
            return new long[] {toProxy, intake, prefill, handoff, firstEvent, relay, toClient, decodeRest, ending};
        }
    }

    static final List<String> HOP_NAMES = List.of("to gateway", "intake", "prefill leg", "handoff",
            "decode 1st event", "relay", "to client", "decode rest", "ending");

    /** How many of {@link #HOP_NAMES} make up the time to first token. */
    static final int TTFT_HOPS = 7;

    private static final Pattern WAKE = Pattern.compile(
            "^\\s*(\\d+)\\.(\\d+)\\s+\\[\\d+\\]\\s+(.*?)\\[(\\d+)(?:/(\\d+))?\\]\\s+awakened: (.*?)\\[(\\d+)(?:/(\\d+))?\\]\\s*$");

    private SchedulerHops() {
    }

    /**
     * Starts recording every wake-up on the machine into {@code file} for {@code length}; empty, having said why, when
     * perf cannot run here.
     */
    static Optional<Process> record(Path file, Duration length) {
        long seconds = Math.max(1, (length.toMillis() + 999) / 1000);
        try {
            Process perf = new ProcessBuilder("perf", "sched", "record", "-k", "mono", "-o", file.toString(), "--",
                    "sleep", Long.toString(seconds))
                    .redirectErrorStream(true).redirectOutput(file.resolveSibling(file.getFileName() + ".log").toFile())
                    .start();
            if (perf.waitFor(300, TimeUnit.MILLISECONDS)) {
                System.out.println("hops: perf sched record exited at once (" + perf.exitValue() + "); see "
                        + file.resolveSibling(file.getFileName() + ".log"));
                return Optional.empty();
            }
            return Optional.of(perf);
        } catch (IOException e) {
            System.out.println("hops: perf is not available (" + e.getMessage() + "); install linux-perf");
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Waits for the recording to end and reads its wake-ups ({@code perf sched timehist -w}). */
    static List<Wake> read(Process recording, Path file) throws IOException, InterruptedException {
        if (!recording.waitFor(60, TimeUnit.SECONDS)) {
            recording.destroy();
            throw new IOException("perf sched record did not end");
        }
        Process timehist = new ProcessBuilder("perf", "sched", "timehist", "-w", "-i", file.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Wake> wakes = new ArrayList<>();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(timehist.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                parse(line).ifPresent(wakes::add);
            }
        }
        timehist.waitFor(60, TimeUnit.SECONDS);
        return wakes;
    }

    /** One line of {@code perf sched timehist -w}, if it is a wake-up. */
    static Optional<Wake> parse(String line) {
        if (!line.contains("awakened:")) {
            return Optional.empty();
        }
        Matcher m = WAKE.matcher(line);
        if (!m.matches()) {
            return Optional.empty();
        }
        String fraction = (m.group(2) + "000000000").substring(0, 9);
        long nanos = Long.parseLong(m.group(1)) * 1_000_000_000L + Long.parseLong(fraction);
        // name[tid/pid], or name[pid] for a process of one thread
        long wakerThread = Long.parseLong(m.group(4));
        long waker = m.group(5) != null ? Long.parseLong(m.group(5)) : wakerThread;
        long wakeeThread = Long.parseLong(m.group(7));
        long wakee = m.group(8) != null ? Long.parseLong(m.group(8)) : wakeeThread;
        boolean betweenEventLoops = m.group(3).equals(EVENT_LOOP) && m.group(6).equals(EVENT_LOOP);
        return Optional.of(new Wake(nanos, waker, wakee, wakerThread, wakeeThread, betweenEventLoops));
    }

    /**
     * The hops of one request, from the wake-ups sorted by time; empty when one of them is missing (a process that
     * was already running when its bytes came is not woken, and that request is left out).
     *
     * @param proxy the gateway's process, or the client's own for a request sent direct
     */
    static Optional<Hops> of(Request request, List<Wake> wakes, long client, long proxy, Set<Long> engines) {
        boolean direct = proxy == client;
        Set<Long> clients = Set.of(client);
        Set<Long> proxies = Set.of(proxy);
        long until = request.firstToken();
        int from = firstAtOrAfter(wakes, request.start());
        int arrived = direct ? -1 : first(wakes, from, clients, proxies, until);
        if (!direct && arrived < 0) {
            return Optional.empty();
        }
        int prefillSent = first(wakes, direct ? from : arrived + 1, proxies, engines, until);
        int answered = prefillSent < 0 ? -1 : first(wakes, prefillSent + 1, engines, proxies, until);
        int decodeSent = answered < 0 ? -1 : first(wakes, answered + 1, proxies, engines, until);
        int relayed = decodeSent < 0 || direct ? -1 : last(wakes, decodeSent + 1, proxies, clients, until);
        if (decodeSent < 0 || (!direct && relayed < 0)) {
            return Optional.empty();
        }
        long out = direct ? until : wakes.get(relayed).nanos();
        int firstEvent = last(wakes, decodeSent + 1, engines, proxies, out);
        if (firstEvent < 0) {
            return Optional.empty();
        }
        long in = direct ? request.start() : wakes.get(arrived).nanos();
        long t1 = wakes.get(prefillSent).nanos();
        long t2 = wakes.get(answered).nanos();
        long t3 = wakes.get(decodeSent).nanos();
        long t4 = wakes.get(firstEvent).nanos();
        if (direct) {
            out = t4;
        }
        int lastEvent = last(wakes, firstEvent, engines, proxies, request.end());
        long t5 = wakes.get(lastEvent).nanos();
        return Optional.of(new Hops(in - request.start(), t1 - in, t2 - t1, t3 - t2, t4 - t3, out - t4,
                request.firstToken() - out, t5 - t4, request.end() - t5));
    }

    /** Medians of each hop over the requests, in nanoseconds, in the order of {@link #HOP_NAMES}. */
    static long[] medians(List<Hops> hops) {
        long[] out = new long[HOP_NAMES.size()];
        for (int h = 0; h < out.length; h++) {
            long[] values = new long[hops.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = hops.get(i).asArray()[h];
            }
            Arrays.sort(values);
            out[h] = values.length == 0 ? 0 : Percentiles.nearestRank(values, values.length, 50);
        }
        return out;
    }

    /** The wake-ups from one of {@code process}'s event loops to another of them. */
    static long betweenEventLoopsOf(List<Wake> wakes, long process) {
        return wakes.stream().filter(w -> w.betweenEventLoops() && w.waker() == process && w.wakee() == process
                && w.wakerThread() != w.wakeeThread()).count();
    }

    private static int firstAtOrAfter(List<Wake> wakes, long nanos) {
        int lo = 0;
        int hi = wakes.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (wakes.get(mid).nanos() < nanos) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The first wake-up of one of {@code wakees} by one of {@code wakers} from index {@code from}, by {@code until}. */
    private static int first(List<Wake> wakes, int from, Set<Long> wakers, Set<Long> wakees, long until) {
        for (int i = Math.max(0, from); i < wakes.size() && wakes.get(i).nanos() <= until; i++) {
            if (wakers.contains(wakes.get(i).waker()) && wakees.contains(wakes.get(i).wakee())) {
                return i;
            }
        }
        return -1;
    }

    /** The last such wake-up by {@code until}. */
    private static int last(List<Wake> wakes, int from, Set<Long> wakers, Set<Long> wakees, long until) {
        int found = -1;
        for (int i = Math.max(0, from); i < wakes.size() && wakes.get(i).nanos() <= until; i++) {
            if (wakers.contains(wakes.get(i).waker()) && wakees.contains(wakes.get(i).wakee())) {
                found = i;
            }
        }
        return found;
    }
}
