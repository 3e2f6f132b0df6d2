package io.handoff.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.handoff.benchmarks.Flags.addWatch;
import static io.handoff.benchmarks.Flags.nonNegative;
import static io.handoff.benchmarks.Flags.positive;
import static io.handoff.benchmarks.Flags.secondsOf;

/** Command-line options of {@link SessionLifecycleBenchmark}. */
record Options(String gateway, String redis, Duration seconds, Duration warmup, Duration latency, int concurrency,
        int channels, Path transitionScript, Path createScript, Duration rpcDeadline, Map<String, Long> watch) {

    static final String USAGE = String.join("\n",
            "usage: java -jar handoff-benchmarks.jar [options]",
            "  --gateway HOST:PORT       gateway gRPC address (plaintext HTTP/2)      [127.0.0.1:50051]",
            "  --redis URL               Redis the gateway uses, for the bare script   [redis://127.0.0.1:6379]",
            "  --seconds N               measured throughput phase (phase B)           [20]",
            "  --warmup-seconds N        unrecorded load before phase B (runs first)   [5]",
            "  --latency-seconds N       one-in-flight latency phase (phase A)         [5]",
            "  --concurrency N           lifecycles in flight in phase B               [64]",
            "  --channels N              gRPC connections phase B spreads over         [2]",
            "  --script PATH             transition.lua to time                        "
                    + "[gateway/src/main/resources/redis/transition.lua]",
            "  --create-script PATH      create.lua that makes the sessions to move    [create.lua beside --script]",
            "  --watch NAME=PID          also report CPU use of this process in phase B (repeatable, Linux)");

    static Options parse(String[] args) {
        String gateway = "127.0.0.1:50051";
        String redis = "redis://127.0.0.1:6379";
        double seconds = 20;
        double warmup = 5;
        double latency = 5;
        int concurrency = 64;
        int channels = 2;
        Path script = Path.of("gateway/src/main/resources/redis/transition.lua");
        Path create = null;
        Map<String, Long> watch = new LinkedHashMap<>();
        Flags flags = new Flags(args, USAGE);
        while (flags.next()) {
            String a = flags.name();
            String value = flags.value();
            switch (a) {
                case "--gateway" -> gateway = value;
                case "--redis" -> redis = value;
                case "--seconds" -> seconds = positive(a, Double.parseDouble(value));
                case "--warmup-seconds" -> warmup = nonNegative(a, Double.parseDouble(value));
                case "--latency-seconds" -> latency = positive(a, Double.parseDouble(value));
                case "--concurrency" -> concurrency = (int) positive(a, Integer.parseInt(value));
                case "--channels" -> channels = (int) positive(a, Integer.parseInt(value));
                case "--script" -> script = Path.of(value);
                case "--create-script" -> create = Path.of(value);
                case "--watch" -> addWatch(watch, value);
                default -> throw flags.unknown();
            }
        }
        if (create == null) {
            Path dir = script.toAbsolutePath().getParent();
            create = dir.resolve("create.lua");
        }
        return new Options(gateway, redis, secondsOf(seconds), secondsOf(warmup), secondsOf(latency), concurrency,
                channels, script, create, Duration.ofSeconds(10), watch);
    }
}
