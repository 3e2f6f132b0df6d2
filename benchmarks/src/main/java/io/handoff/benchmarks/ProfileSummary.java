package io.handoff.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * The top frames of a JFR recording's CPU samples, as docs/benchmarks.md shows them: the methods that were on top of
 * the stack most often (self), and the share of samples each layer of the stack was anywhere in (inclusive), so a
 * profile before and after a change can be compared line by line.
 *
 * <p>A recording dumped with {@code jcmd JFR.dump begin=...} still holds every sample of the chunks that overlap the
 * interval, which for a recording started with the JVM is usually all of them, warm-up included. So the samples are
 * counted over a window of wall-clock time given here, not over whatever the file holds.
 *
 * <p>Usage: {@code java -cp handoff-benchmarks.jar io.handoff.benchmarks.ProfileSummary recording.jfr [top
 * [from-epoch-ms to-epoch-ms]]}
 */
public final class ProfileSummary {

    /** Layers by package prefix, first match wins; what a reader of the profile asks about. */
    private static final Map<String, String> LAYERS = new LinkedHashMap<>();

    static {
        LAYERS.put("io.handoff.gateway.session", "gateway session store");
        LAYERS.put("io.handoff.gateway.api", "gateway fronts (OpenAI, gRPC)");
        LAYERS.put("io.handoff.gateway.orchestration", "gateway orchestration");
        LAYERS.put("io.handoff.gateway", "gateway other");
        LAYERS.put("io.handoff.connector", "connectors");
        LAYERS.put("io.handoff", "handoff other");
        LAYERS.put("com.fasterxml.jackson", "jackson");
        LAYERS.put("io.smallrye.mutiny", "mutiny");
        LAYERS.put("io.opentelemetry", "opentelemetry");
        LAYERS.put("io.micrometer", "micrometer");
        LAYERS.put("io.vertx", "vert.x");
        LAYERS.put("io.netty", "netty");
        LAYERS.put("io.grpc", "grpc-java");
        LAYERS.put("io.quarkus", "quarkus");
        LAYERS.put("java.", "jdk");
        LAYERS.put("jdk.", "jdk");
        LAYERS.put("sun.", "jdk");
    }

    private ProfileSummary() {}

    /** Sample counts of one recording: per top frame, per layer on top, per layer anywhere, per Handoff method. */
    record Summary(int samples, int samplesInFile, Map<String, Integer> self, Map<String, Integer> selfByLayer,
            Map<String, Integer> inclusiveByLayer, Map<String, Integer> handoffInclusive) {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length == 3 || args.length > 4) {
            System.err.println("usage: ProfileSummary recording.jfr [top [from-epoch-ms to-epoch-ms]]");
            System.exit(2);
        }
        int top = args.length > 1 ? Integer.parseInt(args[1]) : 25;
        Instant from = args.length == 4 ? Instant.ofEpochMilli(Long.parseLong(args[2])) : Instant.MIN;
        Instant to = args.length == 4 ? Instant.ofEpochMilli(Long.parseLong(args[3])) : Instant.MAX;
        Summary summary = read(Path.of(args[0]), from, to);
        int samples = summary.samples();
        if (args.length == 4) {
            System.out.printf("%d CPU samples from %s to %s (%d in the file)%n%nself (top %d)%n", samples, from, to,
                    summary.samplesInFile(), top);
        } else {
            System.out.printf("%d CPU samples%n%nself (top %d)%n", samples, top);
        }
        print(summary.self(), samples, top);
        System.out.printf("%nself, by layer (the JDK's own frames charged to the layer that called the JDK)%n");
        print(summary.selfByLayer(), samples, summary.selfByLayer().size());
        System.out.printf("%ninclusive, by layer (a sample counts once for every layer on its stack)%n");
        print(summary.inclusiveByLayer(), samples, summary.inclusiveByLayer().size());
        System.out.printf("%nHandoff's methods, inclusive (top %d)%n", top);
        print(summary.handoffInclusive(), samples, top);
    }

    /** The samples taken from {@code from} to {@code to}, both included. */
    static Summary read(Path recording, Instant from, Instant to) throws IOException {
        Summary summary = new Summary(0, 0, new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashMap<>());
        int samples = 0;
        int samplesInFile = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample")) {
                continue;
            }
            RecordedStackTrace stack = event.getStackTrace();
            if (stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            samplesInFile++;
            if (event.getStartTime().isBefore(from) || event.getStartTime().isAfter(to)) {
                continue;
            }
            samples++;
            List<RecordedFrame> frames = stack.getFrames();
            summary.self().merge(name(frames.get(0)), 1, Integer::sum);
            summary.selfByLayer().merge(callerLayer(frames), 1, Integer::sum);
            frames.stream()
                    .map(frame -> layer(frame.getMethod().getType().getName()))
                    .distinct()
                    .forEach(layer -> summary.inclusiveByLayer().merge(layer, 1, Integer::sum));
            frames.stream()
                    .filter(frame -> frame.getMethod().getType().getName().startsWith("io.handoff"))
                    .map(ProfileSummary::name)
                    .distinct()
                    .forEach(method -> summary.handoffInclusive().merge(method, 1, Integer::sum));
        }
        return new Summary(samples, samplesInFile, summary.self(), summary.selfByLayer(), summary.inclusiveByLayer(),
                summary.handoffInclusive());
    }

    private static void print(Map<String, Integer> counts, int samples, int top) {
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(top)
                .forEach(e -> System.out.printf("%6.1f%%  %s%n", 100.0 * e.getValue() / samples, e.getKey()));
    }

    private static String name(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }

    private static String callerLayer(List<RecordedFrame> frames) {
        for (RecordedFrame frame : frames) {
            String layer = layer(frame.getMethod().getType().getName());
            if (!layer.equals("jdk")) {
                return layer;
            }
        }
        return "jdk";
    }

    private static String layer(String type) {
        for (Map.Entry<String, String> layer : LAYERS.entrySet()) {
            if (type.startsWith(layer.getKey())) {
                return layer.getValue();
            }
        }
        return "other";
    }
}
