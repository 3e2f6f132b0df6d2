package io.handoff.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One replica of the packaged gateway ({@code java -jar quarkus-run.jar}), configured only the way an operator
 * configures it (system properties of the README's and docs/api.md's tables). It binds port 0 and the harness reads
 * the port Quarkus reports ({@code Listening on: http://127.0.0.1:N}): no port is picked before it is bound.
 */
final class GatewayReplica {

    private static final Pattern LISTENING = Pattern.compile("Listening on: http://[^:\\s]+:(\\d+)");

    private final String id;
    private final ChildProcess process;
    private final int port;

    private GatewayReplica(String id, ChildProcess process, int port) {
        this.id = id;
        this.process = process;
        this.port = port;
    }

    static GatewayReplica start(String id, Path jar, Path dir, Map<String, String> config) {
        List<String> command = new ArrayList<>(List.of(Java.binary(), "-Xmx192m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        config.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-Dhandoff.replica-id=" + id);
        command.addAll(List.of("-jar", jar.toString()));
        ChildProcess p = ChildProcess.start("gateway " + id, command, dir.resolve("gateway-" + id + ".log"));
        int port = Integer.parseInt(p.awaitLine(LISTENING, 0, Duration.ofSeconds(90)));
        return new GatewayReplica(id, p, port);
    }

    String id() {
        return id;
    }

    int port() {
        return port;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    ChildProcess process() {
        return process;
    }
}
