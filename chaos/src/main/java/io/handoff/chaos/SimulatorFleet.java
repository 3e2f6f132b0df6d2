package io.handoff.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simulated fleet as a process of its own ({@code SimulatorMain --fleet}): one prefill and one decode engine of
 * every family the simulator offers, on ports they picked themselves and printed. Every engine's own timer on parked
 * KV is {@code holdMs}, so that what nobody releases early is freed within the run.
 */
final class SimulatorFleet {

    static final String MODEL = "chaos-model";
    static final List<String> FAMILIES = List.of("vllm", "sglang", "trtllm", "openengine");
    /**
     * Every prefill and every KV transfer take this long, as real ones do: without them a prefill answers as it starts
     * and a decode's first token follows its start at once, and hardly any client's deadline lands during a prefill or
     * in a decode before its first token, phases {@link CancelPhases} requires a cancel in.
     */
    static final int PREFILL_LATENCY_MS = 10;
    static final int TRANSFER_LATENCY_MS = 15;

    /** One engine as the fleet printed it: {@code vllm    prefill  http://127.0.0.1:p engine_id=... {grpc=...}}. */
    record Engine(String family, String role, String url, int auxPort, int grpcPort) {
        String name() {
            return family + "-" + role;
        }
    }

    private static final Pattern LINE = Pattern.compile(
            "^\\s+(\\w+)\\s+(\\w+)\\s+(http://\\S+) engine_id=\\S+(?: \\{(.*)})?$", Pattern.MULTILINE);

    private final ChildProcess process;
    private final List<Engine> engines;

    private SimulatorFleet(ChildProcess process, List<Engine> engines) {
        this.process = process;
        this.engines = engines;
    }

    static SimulatorFleet start(String classPath, Path dir, long holdMs, int tokenIntervalMs) {
        String hold = Long.toString(holdMs);
        List<String> command = List.of(Java.binary(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dvertx.disableDnsResolver=true", "-cp", classPath, "io.handoff.simulator.SimulatorMain", "--fleet",
                "--port", "0", "--families", String.join(",", FAMILIES), "--model", MODEL,
                "--token-interval-ms", Integer.toString(tokenIntervalMs),
                "--prefill-latency-ms", Integer.toString(PREFILL_LATENCY_MS),
                "--transfer-latency-ms", Integer.toString(TRANSFER_LATENCY_MS), "--abort-request-timeout-ms", hold,
                "--kv-transfer-timeout-ms", hold, "--kv-session-timeout-ms", hold, "--bootstrap-timeout-ms", hold,
                "--waiting-timeout-ms", hold, "--abort-cleanup", "true");
        ChildProcess p = ChildProcess.start("simulator", command, dir.resolve("simulator.log"));
        p.awaitLine(Pattern.compile("fleet up:"), 0, Duration.ofSeconds(60));
        int expected = FAMILIES.size() * 2;
        List<Engine> engines = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (engines.size() < expected) {
            engines.clear();
            Matcher m = LINE.matcher(readLog(p));
            while (m.find()) {
                String aux = m.group(4) == null ? "" : m.group(4);
                engines.add(new Engine(m.group(1), m.group(2), m.group(3), auxPort(aux), number(aux, "grpc")));
            }
            if (engines.size() < expected) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the simulator printed " + engines.size() + " engines, not "
                            + expected + "; see " + p.log());
                }
                Sleep.millis(50);
            }
        }
        return new SimulatorFleet(p, List.copyOf(engines));
    }

    private static String readLog(ChildProcess p) {
        try {
            return Files.readString(p.log());
        } catch (IOException e) {
            return "";
        }
    }

    private static int auxPort(String aux) {
        for (String name : new String[] {"bootstrap", "side_channel", "transceiver", "kv_transfer"}) {
            int n = number(aux, name);
            if (n > 0) {
                return n;
            }
        }
        return 0;
    }

    private static int number(String aux, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=(\\d+)").matcher(aux);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    List<Engine> engines() {
        return engines;
    }

    Engine get(String family, String role) {
        return engines.stream().filter(e -> e.family().equals(family) && e.role().equals(role)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(family + " " + role));
    }

    void stop() {
        process.stop();
    }
}
