package io.handoff.benchmarks;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.handoff.benchmarks.Flags.addWatch;
import static io.handoff.benchmarks.Flags.nonNegative;
import static io.handoff.benchmarks.Flags.positive;
import static io.handoff.benchmarks.Flags.secondsOf;

/** Command-line options of {@link GenerateBenchmark}. */
record GenerateOptions(String gateway, String gatewayGrpc, URI prefill, URI decode, String model, Mode mode, int concurrency,
        int maxTokens, Duration warmup, Duration seconds, long requests, int rounds, Duration settle,
        Duration latency, int channels, long tokenIntervalMs, long prefillLatencyMs, String store,
        Map<String, Long> watch, String heapOf, Duration ramp, Map<String, String> policies, List<URI> prefillPool,
        List<URI> decodePool, PromptWorkload workload, Path hops, boolean http2) {

    /** Which gateway fronts run against the direct baseline. */
    enum Mode {
        GRPC, HTTP, BOTH;

        boolean grpc() {
            return this != HTTP;
        }

        boolean http() {
            return this != GRPC;
        }
    }

    static final String USAGE = String.join("\n",
            "usage: java -cp handoff-benchmarks.jar io.handoff.benchmarks.GenerateBenchmark [options]",
            "  --gateway HOST:PORT       the gateway's HTTP listener                    [127.0.0.1:8080]",
            "  --gateway-grpc HOST:PORT  the gateway's gRPC listener                    [127.0.0.1:50051]",
            "  --prefill URL             the vLLM prefill simulator (direct run)        (required)",
            "  --decode URL              the vLLM decode simulator (direct run)         (required)",
            "  --model NAME              model of the gateway route and the engines     [sim-model]",
            "  --mode grpc|http|both     gateway fronts measured against direct         [both]",
            "  --http-version 1.1|2      the HTTP front's protocol; 2: cleartext with prior knowledge, the streams",
            "                            multiplexed on --channels connections (a connection a stream does not fit",
            "                            an open-file limit of 20,000 at 10,000 streams)  [1.1]",
            "  --concurrency N           requests in flight in each load phase          [64]",
            "  --max-tokens N            output tokens per request                      [64]",
            "  --warmup-seconds N        unrecorded load first, cycling the targets     [120]",
            "  --seconds N               measured seconds of each load phase            [10]",
            "  --requests N              measure each load phase for N requests instead of --seconds",
            "  --rounds N                load phases per target, order rotated each round [3]",
            "  --settle-seconds N        unrecorded start of each phase                 [1]",
            "  --ramp-seconds N          spread the starts of a phase's requests over N s [0]",
            "  --latency-seconds N       one-in-flight phase, targets taking turns (0: skip) [10]",
            "  --channels N              gRPC connections to the gateway                [2]",
            "  --token-interval-ms N     the simulators' setting, for the report        [0]",
            "  --prefill-latency-ms N    the simulators' setting, for the report        [0]",
            "  --store NAME              the gateway's session store, for the report    [memory]",
            "  --watch NAME=PID          also report CPU and RSS of this process (repeatable, Linux)",
            "  --heap-of NAME            a watched JVM whose heap is measured after a full GC (jcmd) with every",
            "                            stream of a load phase still open, and again once it drained",
            "  --hops FILE               record the one-in-flight phase's wake-ups into FILE (perf sched, Linux)",
            "                            and print each target's time to first token hop by hop; needs",
            "                            --watch gateway=PID and the engines' processes as further --watch",
            "policy comparison (issue 15): with --policy, the run compares the gateway's routes instead of direct",
            "  --policy NAME=MODEL       a route (by the model it serves) whose prefill-policy is NAME (repeatable)",
            "  --prefill-pool URL        a prefill simulator of those routes, for its prefix hits (repeatable)",
            "  --decode-pool URL         a decode simulator of those routes, checked at the end (repeatable)",
            "  --prefixes N              shared prefixes of the shared-prefix workload  [32]",
            "  --prefix-tokens N         tokens of each shared prefix                   [2000]",
            "  --suffix-tokens N         tokens of each request's own suffix            [200]");

    static GenerateOptions parse(String[] args) {
        String gateway = "127.0.0.1:8080";
        String gatewayGrpc = "127.0.0.1:50051";
        URI prefill = null;
        URI decode = null;
        String model = "sim-model";
        Mode mode = Mode.BOTH;
        int concurrency = 64;
        int maxTokens = 64;
        double warmup = 120;
        double seconds = 10;
        long requests = 0;
        int rounds = 3;
        double settle = 1;
        double latency = 10;
        int channels = 2;
        long tokenInterval = 0;
        long prefillLatency = 0;
        String store = "memory";
        Map<String, Long> watch = new LinkedHashMap<>();
        String heapOf = null;
        double ramp = 0;
        Map<String, String> policies = new LinkedHashMap<>();
        List<URI> prefillPool = new ArrayList<>();
        List<URI> decodePool = new ArrayList<>();
        int prefixes = 32;
        int prefixTokens = 2000;
        int suffixTokens = 200;
        Path hops = null;
        boolean http2 = false;
        Flags flags = new Flags(args, USAGE);
        while (flags.next()) {
            String a = flags.name();
            String value = flags.value();
            switch (a) {
                case "--gateway" -> gateway = value;
                case "--gateway-grpc" -> gatewayGrpc = value;
                case "--prefill" -> prefill = URI.create(value);
                case "--decode" -> decode = URI.create(value);
                case "--model" -> model = value;
                case "--mode" -> mode = Mode.valueOf(value.toUpperCase(Locale.ROOT));
                case "--concurrency" -> concurrency = (int) positive(a, Integer.parseInt(value));
                case "--max-tokens" -> maxTokens = (int) positive(a, Integer.parseInt(value));
                case "--warmup-seconds" -> warmup = nonNegative(a, Double.parseDouble(value));
                case "--seconds" -> seconds = positive(a, Double.parseDouble(value));
                case "--requests" -> requests = (long) positive(a, Long.parseLong(value));
                case "--rounds" -> rounds = (int) positive(a, Integer.parseInt(value));
                case "--settle-seconds" -> settle = nonNegative(a, Double.parseDouble(value));
                case "--latency-seconds" -> latency = nonNegative(a, Double.parseDouble(value));
                case "--channels" -> channels = (int) positive(a, Integer.parseInt(value));
                case "--token-interval-ms" -> tokenInterval = (long) nonNegative(a, Long.parseLong(value));
                case "--prefill-latency-ms" -> prefillLatency = (long) nonNegative(a, Long.parseLong(value));
                case "--store" -> store = value;
                case "--watch" -> addWatch(watch, value);
                case "--heap-of" -> heapOf = value;
                case "--ramp-seconds" -> ramp = nonNegative(a, Double.parseDouble(value));
                case "--policy" -> addPolicy(policies, value);
                case "--prefill-pool" -> prefillPool.add(URI.create(value));
                case "--decode-pool" -> decodePool.add(URI.create(value));
                case "--prefixes" -> prefixes = (int) positive(a, Integer.parseInt(value));
                case "--prefix-tokens" -> prefixTokens = (int) positive(a, Integer.parseInt(value));
                case "--suffix-tokens" -> suffixTokens = (int) positive(a, Integer.parseInt(value));
                case "--hops" -> hops = Path.of(value);
                case "--http-version" -> http2 = switch (value) {
                    case "1.1" -> false;
                    case "2" -> true;
                    default -> throw new IllegalArgumentException("--http-version is 1.1 or 2\n" + USAGE);
                };
                default -> throw flags.unknown();
            }
        }
        if (policies.isEmpty() && (prefill == null || decode == null)) {
            throw new IllegalArgumentException("--prefill and --decode are required\n" + USAGE);
        }
        if (!policies.isEmpty() && prefillPool.isEmpty()) {
            throw new IllegalArgumentException("--policy needs at least one --prefill-pool\n" + USAGE);
        }
        if (hops != null && !watch.containsKey("gateway")) {
            throw new IllegalArgumentException("--hops needs --watch gateway=PID\n" + USAGE);
        }
        if (heapOf != null && !watch.containsKey(heapOf)) {
            throw new IllegalArgumentException("--heap-of " + heapOf + " names no --watch process\n" + USAGE);
        }
        return new GenerateOptions(gateway, gatewayGrpc, prefill, decode, model, mode, concurrency, maxTokens, secondsOf(warmup),
                secondsOf(seconds), requests, rounds, secondsOf(settle), secondsOf(latency), channels, tokenInterval,
                prefillLatency, store, watch, heapOf, secondsOf(ramp), policies, List.copyOf(prefillPool),
                List.copyOf(decodePool), PromptWorkload.sharedPrefix(prefixes, prefixTokens, suffixTokens), hops,
                http2);
    }

    private static void addPolicy(Map<String, String> policies, String value) {
        int eq = value.indexOf('=');
        if (eq <= 0 || eq == value.length() - 1) {
            throw new IllegalArgumentException("--policy takes NAME=MODEL, was " + value);
        }
        policies.put(value.substring(0, eq), value.substring(eq + 1));
    }

    /** The gateway's HTTP listener as a base URI. */
    URI gatewayHttp() {
        return URI.create("http://" + gateway);
    }
}
