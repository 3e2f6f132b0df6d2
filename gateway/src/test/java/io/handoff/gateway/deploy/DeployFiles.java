package io.handoff.gateway.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Where the deployment's files are, seen from the gateway module (the tests' working directory). */
final class DeployFiles {

    static final Path GATEWAY = Path.of("").toAbsolutePath();
    static final Path DEPLOY = GATEWAY.resolveSibling("deploy");
    /** Hand-written Kubernetes objects: what the extension cannot generate. */
    static final Path KUBERNETES = DEPLOY.resolve("kubernetes");
    static final Path GRAFANA = DEPLOY.resolve("grafana");
    static final Path PROMETHEUS = DEPLOY.resolve("prometheus");
    /** What quarkus-kubernetes writes at package. */
    static final Path GENERATED = GATEWAY.resolve("target/kubernetes/kubernetes.yml");
    static final Path APPLICATION_PROPERTIES = GATEWAY.resolve("src/main/resources/application.properties");
    static final Path DOCKERFILE = GATEWAY.resolve("src/main/docker/Dockerfile.jvm");
    static final Path PACKAGED_JAR = GATEWAY.resolve("target/quarkus-app/quarkus-run.jar");

    private DeployFiles() {
    }

    /** Every regular file under {@code folder}, sorted, so that failures name files in a stable order. */
    static List<Path> filesUnder(Path folder) throws IOException {
        try (Stream<Path> files = Files.walk(folder)) {
            return files.filter(Files::isRegularFile).sorted().toList();
        }
    }
}
