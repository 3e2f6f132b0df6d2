package io.handoff.gateway.testing;

import io.quarkus.test.common.PropertyTestUtil;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * For the packaged gateway ({@code @QuarkusIntegrationTest}, which runs {@code quarkus-run.jar} with the production
 * profile): the simulated fleet in this JVM with routes to it ({@link FleetRoutes}), an {@link OtlpReceiver} when the
 * init arg {@code protocol} names one, and the gateway's log, which the tests read.
 *
 * <p>The endpoint reaches the gateway the two ways an operator gives it: for {@code grpc} as the standard
 * {@code OTEL_EXPORTER_OTLP_ENDPOINT} (which application.properties maps), for {@code http/protobuf} as Quarkus'
 * own {@code quarkus.otel.exporter.otlp.traces.endpoint} and {@code .protocol}. With {@code protocol=none} no endpoint
 * is given at all. Everything is passed at run time: the jar is the one {@code ./mvnw package} built.
 */
public class OtlpExportResource implements QuarkusTestResourceLifecycleManager {

    /** How often the gateway hands its spans to the exporter here (production: 5 s). */
    public static final Duration EXPORT_DELAY = Duration.ofMillis(50);

    private static volatile EngineFleet fleet;
    private static volatile OtlpReceiver receiver;
    private static volatile Path log;
    private static volatile int grpcPort;

    private String protocol = "none";

    public static EngineFleet fleet() {
        return running(fleet, "fleet");
    }

    public static OtlpReceiver receiver() {
        return running(receiver, "receiver");
    }

    /**
     * The packaged gateway's gRPC port. The launcher passes the HTTP test port but knows nothing of the gRPC
     * listener, which would otherwise take its production port; so this resource gives it a free one.
     */
    public static int grpcPort() {
        return running(grpcPort == 0 ? null : grpcPort, "gRPC port");
    }

    /** The gateway's log so far. */
    public static String log() {
        try {
            return Files.readString(running(log, "log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> T running(T t, String what) {
        if (t == null) {
            throw new IllegalStateException("no " + what + " (use OtlpExportResource)");
        }
        return t;
    }

    @Override
    public void init(Map<String, String> initArgs) {
        protocol = initArgs.getOrDefault("protocol", "none");
    }

    @Override
    public Map<String, String> start() {
        fleet = EngineFleet.start();
        Map<String, String> config = new HashMap<>(FleetRoutes.of(fleet));
        // the file the launcher has the packaged gateway log to (kept in target/); each launch starts it afresh
        log = PropertyTestUtil.getLogFilePath();
        try {
            Files.deleteIfExists(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        grpcPort = freePort();
        config.put("quarkus.grpc.server.port", Integer.toString(grpcPort));
        // The launcher starts every later launch on the HTTP port the first one was given, though that port went back
        // to the kernel in between and any socket bound to port 0 since (an engine simulator, a client) may hold it;
        // a fresh free port for each launch, read back from the gateway's log as the first one is.
        config.put("quarkus.http.port", "0");
        config.put("quarkus.log.category.\"handoff.requests\".level", "INFO");
        config.put("quarkus.otel.bsp.schedule.delay", EXPORT_DELAY.toMillis() + "ms");
        if (!protocol.equals("none")) {
            receiver = OtlpReceiver.start(OtlpReceiver.Protocol.of(protocol));
            if (receiver.protocol() == OtlpReceiver.Protocol.GRPC) {
                config.put("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint());
            } else {
                config.put("quarkus.otel.exporter.otlp.traces.endpoint", receiver.endpoint());
                config.put("quarkus.otel.exporter.otlp.traces.protocol", receiver.protocol().configName());
            }
        }
        return config;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
        if (receiver != null) {
            receiver.close();
            receiver = null;
        }
        if (fleet != null) {
            fleet.close();
            fleet = null;
        }
        grpcPort = 0;
    }
}
