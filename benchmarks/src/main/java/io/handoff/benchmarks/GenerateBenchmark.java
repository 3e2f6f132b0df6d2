package io.handoff.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;

import java.io.IOException;
import java.net.URI;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * Load driver for orchestrated handoffs through the gateway next to the same two vLLM legs sent straight to the
 * simulated engines, in one run: gRPC {@code Generate} (issue 4) and streamed {@code /v1/completions} (issue 6).
 *
 * <p>Order of a run: one probe request per target; a warm-up of unrecorded load that cycles through the targets in
 * slices of at most 5 s (the gateway's JIT needs tens of seconds); then {@code --rounds} rounds of load phases, one
 * per target at {@code --concurrency}, the order rotated each round so that drift in the machine's load (other work
 * shares it) falls on every target alike; each phase starts unrecorded for {@code --settle-seconds} and drains before
 * the next, so targets never overlap. Last, one request in flight with the targets taking turns request by request,
 * which is where the gateway's own added latency shows: under a closed loop at high concurrency, latency is
 * concurrency / throughput (Little's law), so there the added latency is the throughput gap in another form.
 *
 * <p>With {@code --policy}, the run compares endpoint choice instead (issue 15): one target per gateway route, each
 * route differing only in its prefill policy, on a shared-prefix workload and then on unique prompts of the same
 * length, with the prefix-cache hits of the prefill simulators over each phase (see {@link PolicyReport}).
 */
public final class GenerateBenchmark {

    static final double AIM_THROUGHPUT_RATIO = 0.70;
    static final double AIM_ADDED_P50_MS = 1.0;
    private static final Duration SLICE = Duration.ofSeconds(5);
    /** How long a phase may take to drain beyond the time its requests' tokens take at the simulators' pace. */
    private static final Duration DRAIN_MARGIN = Duration.ofSeconds(60);
    /** About 75 prompt tokens for the simulator's tokenizer; the request number is appended to each. */
    static final String PROMPT = "Explain, step by step and for a reader who has never seen a data centre, how a"
            + " large language model serves one request when the work of reading the prompt and the work of writing"
            + " the answer run on two different machines, and what has to travel between them";

    private final GenerateOptions o;
    private final Vertx vertx;
    private final List<Target> targets;
    /** How long a phase may take to drain: its slowest requests must end before the next target's phase begins. */
    private final Duration drain;
    private final List<Tally> everyTally = new ArrayList<>();
    private final MemoryWatch memory;
    /** Each watched process's resident set once the probes ran, before any load: the base of "per open stream". */
    private Map<String, Long> idleRss = Map.of();
    /** The heap of {@code --heap-of} after a full collection with the last phase's streams open. */
    private long heapOpen = -1;
    /** The scheduler's recording of the one-in-flight phase ({@code --hops}), while it runs. */
    private Process hopsRecording;

    private GenerateBenchmark(GenerateOptions o, Vertx vertx, List<Target> targets) {
        this.o = o;
        this.vertx = vertx;
        this.targets = targets;
        this.memory = new MemoryWatch(o.watch());
        this.drain = DRAIN_MARGIN.plusMillis(2L * o.maxTokens() * o.tokenIntervalMs());
    }

    public static void main(String[] args) throws Exception {
        GenerateOptions options;
        try {
            options = GenerateOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        System.exit(run(options, ProcessHandle.current().info().commandLine()
                .orElseGet(() -> "java -cp handoff-benchmarks.jar " + GenerateBenchmark.class.getName() + " "
                        + String.join(" ", args))));
    }

    static int run(GenerateOptions o, String commandLine) throws Exception {
        Locale.setDefault(Locale.ROOT);
        System.out.println(o.policies().isEmpty()
                ? "== Handoff Generate benchmark: through the gateway vs the two vLLM legs direct =="
                : "== Handoff Generate benchmark: prefill policies, one gateway route each (issue 15) ==");
        System.out.println("command: " + commandLine);
        System.out.printf("machine: %d CPUs, Java %s (%s)%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), System.getProperty("java.vm.name"));
        System.out.printf("gateway: %s, gRPC %s (%s store)   %s%n", o.gateway(), o.gatewayGrpc(), o.store(),
                o.policies().isEmpty() ? "prefill: " + o.prefill() + "   decode: " + o.decode() + "   model: "
                        + o.model() : "policy routes (policy=model): " + o.policies());
        System.out.printf("requests: %d output tokens, simulator token interval %d ms, prefill latency %d ms%n",
                o.maxTokens(), o.tokenIntervalMs(), o.prefillLatencyMs());
        Vertx vertx = Vertx.vertx();
        List<Target> targets = new ArrayList<>();
        try {
            // one pooled connection per stream in flight, as the gateway's own connector client allows
            int pool = o.concurrency() + 16;
            if (!o.policies().isEmpty()) {
                o.policies().forEach((policy, model) -> targets.add(new GatewayHttp(vertx, o.gatewayHttp(), model,
                        o.maxTokens(), pool, policy, policy)));
                return new GenerateBenchmark(o, vertx, targets).comparePolicies();
            }
            targets.add(new DirectLegs(vertx, o.prefill(), o.decode(), o.model(), o.maxTokens(), pool));
            if (o.mode().grpc()) {
                targets.add(new GatewayGrpc(o.gatewayGrpc(), o.channels(), o.model(), o.maxTokens(),
                        o.tokenIntervalMs()));
            }
            if (o.mode().http()) {
                targets.add(o.http2() ? GatewayHttp.overHttp2(vertx, o.gatewayHttp(), o.model(), o.maxTokens(),
                        o.channels()) : new GatewayHttp(vertx, o.gatewayHttp(), o.model(), o.maxTokens(), pool));
            }
            return new GenerateBenchmark(o, vertx, targets).measure();
        } finally {
            targets.forEach(Target::close);
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private int measure() throws Exception {
        if (!probeAll()) {
            return 1;
        }
        idleRss = memory.rss();
        System.out.println();
        System.out.printf("warm-up: %.0f s, concurrency %d, targets in turn for at most %d s each%n",
                o.warmup().toMillis() / 1000.0, o.concurrency(), SLICE.toSeconds());
        List<String> warmTrace = warmUp(ClosedLoop.numbered(PROMPT));

        System.out.println();
        System.out.printf("load: %d round(s), concurrency %d, each phase %.1f s unrecorded then %s%n", o.rounds(),
                o.concurrency(), o.settle().toMillis() / 1000.0, o.requests() > 0 ? o.requests() + " requests"
                        : String.format("%.1f s", o.seconds().toMillis() / 1000.0));
        Map<Target, Tally> load = tallies("load");
        int drainFailures = 0;
        for (int round = 0; round < o.rounds(); round++) {
            for (int k = 0; k < targets.size(); k++) {
                Target t = targets.get((k + round) % targets.size());
                if (!loadWindow(load.get(t), round, ClosedLoop.numbered(PROMPT))) {
                    drainFailures++;
                }
            }
        }

        Map<Target, Tally> latency = null;
        Map<String, Double> latencyCores = Map.of();
        if (!o.latency().isZero()) {
            latency = tallies("one in flight");
            latencyCores = oneInFlight(latency);
        }

        GenerateReport report = new GenerateReport(o, targets, load, latency, latencyCores, warmTrace);
        report.print();
        if (latency != null && o.hops() != null) {
            printHops(latency);
        }
        System.out.println();
        StringBuilder sent = new StringBuilder("requests over the whole run (probe, warm-up, settle and drain"
                + " included; to divide a process's CPU since its start by):");
        for (Target t : targets) {
            long n = everyTally.stream().filter(tally -> tally.target == t).mapToLong(tally -> tally.ended.get())
                    .sum() + 1; // and the probe
            sent.append(String.format("  %s %d", t.key(), n));
        }
        System.out.println(sent);

        List<String> engineProblems = checkEngines(List.of(o.prefill()), List.of(o.decode()));
        long errors = printErrors(drainFailures, engineProblems);
        System.out.println();
        System.out.println(report.resultLine(errors));
        return errors == 0 && drainFailures == 0 && engineProblems.isEmpty() ? 0 : 1;
    }

    /**
     * The policy comparison (issue 15): a warm-up on the shared-prefix workload, then for each workload (shared
     * prefix, unique prompts) {@code --rounds} rounds of one load phase per policy route, the order rotated each
     * round. Each phase has prompts of its own (its own prefixes), so no policy starts with the cache another filled;
     * the prefill simulators' prefix-cache counters are read before the phase and after it drained.
     */
    private int comparePolicies() throws Exception {
        if (!probeAll()) {
            return 1;
        }
        idleRss = memory.rss();
        PromptWorkload shared = o.workload();
        System.out.printf("%nworkload: %d prefixes of %d tokens, then %d tokens of each request's own; prefill"
                + " engines %s%n", shared.prefixes(), shared.prefixTokens(), shared.suffixTokens(), o.prefillPool());
        System.out.printf("warm-up: %.0f s on the shared-prefix workload, concurrency %d, routes in turn%n",
                o.warmup().toMillis() / 1000.0, o.concurrency());
        long salt = 0;
        warmUp(shared.prompts(salt));
        System.out.printf("%nload: %d round(s) per workload, concurrency %d, each phase %.1f s unrecorded then"
                + " %.1f s%n", o.rounds(), o.concurrency(), o.settle().toMillis() / 1000.0,
                o.seconds().toMillis() / 1000.0);
        PolicyReport report = new PolicyReport(targets);
        int drainFailures = 0;
        for (PromptWorkload workload : List.of(shared, shared.unique())) {
            Map<Target, Tally> load = tallies(workload.name());
            for (int round = 0; round < o.rounds(); round++) {
                for (int k = 0; k < targets.size(); k++) {
                    Target t = targets.get((k + round) % targets.size());
                    PrefixTokens before = prefixTokens();
                    if (!loadWindow(load.get(t), round, workload.prompts(++salt))) {
                        drainFailures++;
                    }
                    report.prefixTokens(workload, t, prefixTokens().minus(before));
                }
            }
            report.add(workload, load);
        }
        report.print();
        List<String> engineProblems = checkEngines(o.prefillPool(), o.decodePool());
        long errors = printErrors(drainFailures, engineProblems);
        return errors == 0 && drainFailures == 0 && engineProblems.isEmpty() ? 0 : 1;
    }

    /** The prefix-cache counters summed over the prefill pool. */
    private PrefixTokens prefixTokens() throws Exception {
        long hit = 0;
        long miss = 0;
        for (URI engine : o.prefillPool()) {
            JsonNode stats = EngineCheck.stats(vertx, engine);
            hit += stats.path("prefix_cache_hit_tokens").asLong();
            miss += stats.path("prefix_cache_miss_tokens").asLong();
        }
        return new PrefixTokens(hit, miss);
    }

    /** Prints the check of every simulator after the run; answers the problems found. */
    private List<String> checkEngines(List<URI> prefills, List<URI> decodes) {
        System.out.println();
        System.out.println("simulators after the run (every request drained):");
        List<String> engineProblems = new ArrayList<>();
        prefills.forEach(e -> engineProblems.addAll(EngineCheck.check(vertx, "prefill", e)));
        decodes.forEach(e -> engineProblems.addAll(EngineCheck.check(vertx, "decode", e)));
        return engineProblems;
    }

    /** Prints the errors of the whole run and the simulators' problems; answers the number of errors. */
    private long printErrors(int drainFailures, List<String> engineProblems) {
        long errors = everyTally.stream().mapToLong(t -> t.errors.count()).sum();
        System.out.println();
        System.out.printf("errors (warm-up, measured, drain) = %d%s%n", errors,
                drainFailures == 0 ? "" : "   (" + drainFailures + " phase(s) did not drain in " + drain.toSeconds()
                        + " s)");
        for (Tally t : everyTally) {
            t.errors.kept().forEach(e -> System.out.println("  error (" + t.errors.phase() + "): " + e));
        }
        engineProblems.forEach(p -> System.out.println("  simulator check failed: " + p));
        return errors;
    }

    private Map<Target, Tally> tallies(String phase) {
        Map<Target, Tally> out = new LinkedHashMap<>();
        for (Target t : targets) {
            Tally tally = new Tally(t, phase);
            out.put(t, tally);
            everyTally.add(tally);
        }
        return out;
    }

    /** One probe per target; answers false, having said why, when one did not complete. */
    private boolean probeAll() throws Exception {
        for (Target t : targets) {
            String problem = probe(t);
            if (problem != null) {
                System.out.println("probe: " + t.name() + " did not complete a request: " + problem);
                return false;
            }
        }
        return true;
    }

    /** One request, waited for; answers null or what went wrong, so a misconfigured run stops at once. */
    private static String probe(Target t) throws Exception {
        CompletableFuture<String> outcome = new CompletableFuture<>();
        t.send("bench-probe-" + t.key() + "-" + System.nanoTime(), PROMPT, new Target.Listener() {
            @Override
            public void firstToken() {
            }

            @Override
            public void completed() {
                outcome.complete(null);
            }

            @Override
            public void failed(String operation, Throwable cause) {
                outcome.complete(operation + ": " + cause);
            }
        });
        return outcome.get(90, TimeUnit.SECONDS);
    }

    /** Unrecorded load, the targets in turn; answers the rate of each slice, to show when the JIT settled. */
    private List<String> warmUp(LongFunction<String> prompts) throws InterruptedException {
        Map<Target, Tally> warm = tallies("warm-up");
        List<String> trace = new ArrayList<>();
        long until = System.nanoTime() + o.warmup().toNanos();
        for (int i = 0; System.nanoTime() < until; i++) {
            Tally tally = warm.get(targets.get(i % targets.size()));
            long slice = Math.min(SLICE.toNanos(), until - System.nanoTime());
            ClosedLoop loop = new ClosedLoop(o.concurrency(), o.ramp(), () -> tally, prompts);
            long start = System.nanoTime();
            loop.start();
            TimeUnit.NANOSECONDS.sleep(slice);
            long done = loop.completedTotal();
            double seconds = (System.nanoTime() - start) / 1e9;
            if (!loop.stop(drain)) {
                tally.errors.add("warm-up drain", new IllegalStateException("requests still in flight after "
                        + drain.toSeconds() + " s"));
            }
            trace.add(String.format("%s %.0f", tally.target.key(), done / seconds));
        }
        return trace;
    }

    /** One measured load phase of one target; answers false if its requests did not drain. */
    private boolean loadWindow(Tally tally, int round, LongFunction<String> prompts) throws InterruptedException {
        ClosedLoop loop = new ClosedLoop(o.concurrency(), o.ramp(), () -> tally, prompts);
        loop.start();
        TimeUnit.NANOSECONDS.sleep(o.settle().toNanos());
        CpuWatch cpu = new CpuWatch(o.watch());
        cpu.start();
        long start = System.nanoTime();
        loop.recording(true);
        if (o.requests() > 0) {
            long limit = start + TimeUnit.MINUTES.toNanos(10);
            while (loop.completedWhileRecording() < o.requests() && System.nanoTime() < limit) {
                TimeUnit.MILLISECONDS.sleep(1);
            }
        } else {
            TimeUnit.NANOSECONDS.sleep(o.seconds().toNanos());
        }
        loop.recording(false);
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Double> cores = cpu.stop();
        long requests = loop.completedWhileRecording();
        String memoryOpen = memoryWithStreamsOpen();
        boolean drained = loop.stop(drain);
        tally.window(seconds, requests, cores);
        System.out.printf("  round %d/%d  %-30s %7.0f req/s  (%d requests in %.1f s; errors so far %d)%n",
                round + 1, o.rounds(), tally.target.name(), requests / seconds, requests, seconds,
                tally.errors.count());
        if (memoryOpen != null) {
            String drainedHeap = "";
            if (o.heapOf() != null) {
                long heapDrained = memory.heapAfterFullGc(o.heapOf());
                drainedHeap = "; drained: " + MemoryWatch.megabytes(heapDrained) + " (the open streams' heap: "
                        + MemoryWatch.perStream(heapOpen, heapDrained, o.concurrency()) + " per stream)";
            }
            System.out.println("    memory, " + o.concurrency() + " streams open: " + memoryOpen + drainedHeap);
        }
        return drained;
    }

    /**
     * Each watched process's resident set with the phase's streams still open (and what it grew by since before the
     * load, per open stream), and the heap of {@code --heap-of} after a full collection; null when nothing is
     * watched. Measured after the window's recording ended, so the collection's pause is in no figure.
     */
    private String memoryWithStreamsOpen() {
        if (o.watch().isEmpty()) {
            return null;
        }
        StringBuilder line = new StringBuilder();
        memory.rss().forEach((name, rss) -> line.append(String.format("%s RSS %s (+%s per stream)  ", name,
                MemoryWatch.megabytes(rss), MemoryWatch.perStream(rss, idleRss.getOrDefault(name, -1L),
                        o.concurrency()))));
        if (o.heapOf() != null) {
            heapOpen = memory.heapAfterFullGc(o.heapOf());
            line.append(o.heapOf()).append(" heap after full GC ").append(MemoryWatch.megabytes(heapOpen));
        }
        return line.toString().strip();
    }

    /**
     * Each target's time to first token at one in flight, hop by hop, from the scheduler's wake-ups
     * ({@link SchedulerHops}): every watched process but the gateway and Redis is taken for an engine.
     */
    private void printHops(Map<Target, Tally> tallies) throws IOException, InterruptedException {
        System.out.println();
        if (hopsRecording == null) {
            System.out.println("hops: not recorded");
            return;
        }
        List<SchedulerHops.Wake> wakes = SchedulerHops.read(hopsRecording, o.hops());
        long client = ProcessHandle.current().pid();
        long gateway = o.watch().get("gateway");
        Set<Long> engines = new HashSet<>();
        o.watch().forEach((name, pid) -> {
            if (!name.equals("gateway") && !name.equals("redis")) {
                engines.add(pid);
            }
        });
        System.out.printf("One in flight, the time to first token hop by hop (ms, median of the requests whose every hop"
                + " showed as a wake-up; perf sched, %d wake-ups in %s):%n", wakes.size(), o.hops());
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("target", "requests"));
        header.addAll(SchedulerHops.HOP_NAMES.subList(0, SchedulerHops.TTFT_HOPS));
        header.add("= TTFT");
        header.addAll(SchedulerHops.HOP_NAMES.subList(SchedulerHops.TTFT_HOPS, SchedulerHops.HOP_NAMES.size()));
        rows.add(header.toArray(String[]::new));
        for (Target t : targets) {
            List<SchedulerHops.Request> requests = tallies.get(t).moments();
            long proxy = t.key().equals("direct") ? client : gateway;
            List<SchedulerHops.Hops> hops = new ArrayList<>();
            for (SchedulerHops.Request r : requests) {
                SchedulerHops.of(r, wakes, client, proxy, engines).ifPresent(hops::add);
            }
            List<String> row = new ArrayList<>(List.of(t.name(), hops.size() + " of " + requests.size()));
            long[] medians = SchedulerHops.medians(hops);
            long ttft = 0;
            for (int h = 0; h < medians.length; h++) {
                row.add(String.format("%.3f", medians[h] / 1e6));
                ttft += h < SchedulerHops.TTFT_HOPS ? medians[h] : 0;
                if (h == SchedulerHops.TTFT_HOPS - 1) {
                    row.add(String.format("%.3f", ttft / 1e6));
                }
            }
            rows.add(row.toArray(String[]::new));
        }
        Table.print(rows);
        System.out.println("  (to gateway: the client's request until it woke the gateway; intake: until the gateway,"
                + " or the client sent direct, woke an engine with the prefill leg; handoff: from the prefill's answer"
                + " waking it until it woke an engine with the decode leg; decode 1st event: until the decode engine"
                + " last woke it before the first token; relay: until the gateway woke the client; to client: until"
                + " the client read the token; decode rest: from that token's wake-up to the decode engine's last one;"
                + " ending: from there until the client saw the stream end. Medians need not add up to the median.)");
        long throughGateway = targets.stream().filter(t -> !t.key().equals("direct"))
                .mapToLong(t -> tallies.get(t).moments().size()).sum();
        long betweenLoops = SchedulerHops.betweenEventLoopsOf(wakes, gateway);
        System.out.printf("  wake-ups from one of the gateway's event loops to another: %d, %.2f a request through the"
                + " gateway (%d requests)%n", betweenLoops, throughGateway == 0 ? 0.0 : (double) betweenLoops
                / throughGateway, throughGateway);
    }

    /** One request in flight, the targets taking turns request by request; answers the CPU of the window. */
    private Map<String, Double> oneInFlight(Map<Target, Tally> tallies) throws InterruptedException {
        AtomicLong turn = new AtomicLong();
        ClosedLoop loop = new ClosedLoop(1, () -> tallies.get(targets.get((int) (turn.getAndIncrement()
                % targets.size()))), PROMPT);
        loop.start();
        TimeUnit.NANOSECONDS.sleep(Math.max(o.settle().toNanos(), TimeUnit.SECONDS.toNanos(1)));
        CpuWatch cpu = new CpuWatch(o.watch());
        if (o.hops() != null) {
            tallies.values().forEach(Tally::keepMoments);
            hopsRecording = SchedulerHops.record(o.hops(), o.latency()).orElse(null);
        }
        cpu.start();
        long start = System.nanoTime();
        loop.recording(true);
        TimeUnit.NANOSECONDS.sleep(o.latency().toNanos());
        loop.recording(false);
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Double> cores = cpu.stop();
        if (!loop.stop(drain)) {
            tallies.values().iterator().next().errors.add("drain", new IllegalStateException(
                    "the one-in-flight request did not end"));
        }
        tallies.values().forEach(t -> t.window(seconds, t.total.summary().count(), Map.of()));
        return cores;
    }
}
