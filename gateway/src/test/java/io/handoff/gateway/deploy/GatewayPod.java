package io.handoff.gateway.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.awaitility.Awaitility;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged gateway started the way a Deployment's pod would start it: in the image's working directory, with the
 * container's environment (values taken from the Secrets and ConfigMaps it names) and the files its Secret and
 * ConfigMap volumes mount there. A temporary directory stands for the working directory; a mount outside it cannot
 * be placed, and fails. What a test machine must change is passed as {@code overrides} (the Redis to use, a free
 * port); the rest is the manifest's.
 */
final class GatewayPod implements AutoCloseable {

    /** How long a loaded machine may take to start the gateway. */
    private static final Duration START_DEADLINE = Duration.ofSeconds(120);

    private final Process process;
    private final Path log;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One answer of the gateway. */
    record Answer(int status, String body) {
    }

    private GatewayPod(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /**
     * Starts the jar as {@code deployment}'s first container and waits until {@code readinessPath} answers 200.
     *
     * @param overrides environment that replaces the container's (a variable set to null is removed)
     */
    static GatewayPod start(Cluster cluster, Deployment deployment, Path jar, String workingDir, Path root,
            Map<String, String> overrides, String readinessPath) throws IOException {
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);
        Files.createDirectories(root);
        for (VolumeMount mount : container.getVolumeMounts()) {
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError("no volume " + mount.getName()));
            Path dir = placed(mount.getMountPath(), workingDir, root);
            Files.createDirectories(dir);
            for (Map.Entry<String, String> file : cluster.volumeFiles(volume).entrySet()) {
                Files.writeString(dir.resolve(file.getKey()), file.getValue());
            }
        }

        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // the image's JAVA_OPTS size the heap from the container's limit; on a shared test machine a small
                // heap and quick compilation start it with the least CPU
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-jar", jar.toString());
        builder.directory(root.toFile());
        Map<String, String> environment = builder.environment();
        // only what the pod would have: nothing of this machine's environment leaks into the gateway's configuration
        environment.clear();
        for (EnvVar env : container.getEnv()) {
            environment.put(env.getName(), value(cluster, env, deployment.getMetadata().getNamespace(), workingDir,
                    root));
        }
        overrides.forEach((name, value) -> {
            if (value == null) {
                environment.remove(name);
            } else {
                environment.put(name, value);
            }
        });
        int port = Integer.parseInt(environment.get("QUARKUS_HTTP_PORT"));
        Path log = root.resolve("gateway.log");
        builder.redirectErrorStream(true).redirectOutput(log.toFile());
        GatewayPod started = new GatewayPod(builder.start(), log, port);
        try {
            started.awaitReady(readinessPath);
        } catch (RuntimeException | Error e) {
            started.close();
            throw new AssertionError("the gateway did not become ready as its pod; its log:\n" + started.log(), e);
        }
        return started;
    }

    /** Where a path of the container lies in the directory standing for its working directory. */
    private static Path placed(String containerPath, String workingDir, Path root) {
        if (!containerPath.startsWith(workingDir + "/")) {
            throw new AssertionError(containerPath + " is outside the image's working directory " + workingDir
                    + ": this test cannot place it");
        }
        return root.resolve(containerPath.substring(workingDir.length() + 1));
    }

    private static String value(Cluster cluster, EnvVar env, String namespace, String workingDir, Path root) {
        if (env.getValueFrom() == null) {
            // a path of the container (a config location) becomes the same path under the stand-in directory
            return env.getValue() == null ? "" : env.getValue().replace(workingDir + "/", root + "/");
        }
        var secretKey = env.getValueFrom().getSecretKeyRef();
        if (secretKey != null) {
            return cluster.secretValue(secretKey.getName(), secretKey.getKey())
                    .orElseThrow(() -> new AssertionError("env " + env.getName() + ": no " + secretKey));
        }
        var configKey = env.getValueFrom().getConfigMapKeyRef();
        if (configKey != null) {
            return cluster.configMapValue(configKey.getName(), configKey.getKey())
                    .orElseThrow(() -> new AssertionError("env " + env.getName() + ": no " + configKey));
        }
        var field = env.getValueFrom().getFieldRef();
        if (field != null && field.getFieldPath().equals("metadata.namespace")) {
            return namespace;
        }
        throw new AssertionError("env " + env.getName() + " comes from a source this test does not resolve: "
                + env.getValueFrom());
    }

    private void awaitReady(String readinessPath) {
        Awaitility.await("the gateway's readiness").atMost(START_DEADLINE).pollInterval(Duration.ofMillis(250))
                .ignoreExceptionsMatching(e -> e instanceof UncheckedIOException)
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new AssertionError("the gateway exited with " + process.exitValue());
                    }
                    return get(readinessPath, Map.of()).status() == 200;
                });
    }

    Answer get(String path, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30));
        headers.forEach(request::header);
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
