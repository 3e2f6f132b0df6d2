package io.handoff.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One replica of the packaged gateway ({@code java -jar quarkus-run.jar}), configured only the way an operator
 * configures it (system properties of the README's and docs/api.md's tables). Its HTTP and gRPC listeners bind port 0
 * and the harness reads the ports Quarkus reports ({@code Started gRPC server on 127.0.0.1:N}, {@code Listening on:
 * http://127.0.0.1:N}): no port is picked before it is bound.
 */
final class GatewayReplica {

    private static final Pattern GRPC_STARTED = Pattern.compile("Started gRPC server on [^:\\s]+:(\\d+)");
    private static final Pattern LISTENING = Pattern.compile("Listening on: http://[^:\\s]+:(\\d+)");

    private final String id;
    private final ChildProcess process;
    private final int port;
    private final int grpcPort;

    private GatewayReplica(String id, ChildProcess process, int port, int grpcPort) {
        this.id = id;
        this.process = process;
        this.port = port;
        this.grpcPort = grpcPort;
    }

    /**
     * Starts one replica with {@code config} as system properties and {@code environment} as its environment (the
     * store's address, {@code HANDOFF_REDIS_URL} and {@code QUARKUS_REDIS_CLIENT_TYPE}, as README has an operator
     * give them).
     */
    static GatewayReplica start(String id, Path jar, Path dir, Map<String, String> config,
            Map<String, String> environment) {
        List<String> command = new ArrayList<>(List.of(Java.binary(), "-Xmx192m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        config.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-Dhandoff.replica-id=" + id);
        command.addAll(List.of("-jar", jar.toString()));
        ChildProcess p = ChildProcess.start("gateway " + id, command, environment,
                dir.resolve("gateway-" + id + ".log"));
        int port = Integer.parseInt(p.awaitLine(LISTENING, 0, Duration.ofSeconds(90)));
        int grpcPort = Integer.parseInt(p.awaitLine(GRPC_STARTED, 0, Duration.ofSeconds(5)));
        return new GatewayReplica(id, p, port, grpcPort);
    }

    String id() {
        return id;
    }

    int port() {
        return port;
    }

    int grpcPort() {
        return grpcPort;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    ChildProcess process() {
        return process;
    }
}
