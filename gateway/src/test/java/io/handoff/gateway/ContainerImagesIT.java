package io.handoff.gateway;

import io.handoff.simulator.SimFleet;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The container image definitions, read after {@code ./mvnw package}: the gateway's
 * ({@code gateway/src/main/docker/Dockerfile.jvm}) and the simulated fleet's
 * ({@code engine-connectors/simulator/src/main/docker/Dockerfile.jvm}). Every path either copies exists in its build
 * context (the module), neither runs as root, each exposes the ports its configuration listens on, and the image
 * names are the ones README documents. The images themselves are not built here (no registry on the build machines).
 */
class ContainerImagesIT {

    /** The image names README documents, tagged with the project version. */
    static final String GATEWAY_IMAGE = "handoff/gateway";
    static final String SIMULATOR_IMAGE = "handoff/engine-simulator";

    private static final Path GATEWAY = Path.of("").toAbsolutePath();
    private static final Path SIMULATOR = GATEWAY.resolveSibling("engine-connectors").resolve("simulator");
    private static final Path README = GATEWAY.resolveSibling("README.md");

    /** One instruction of a Dockerfile: its keyword and arguments, continuation lines joined. */
    record Instruction(String keyword, String arguments) {
    }

    @Test
    void theGatewayImageCopiesThePackagedFastJarRunsUnprivilegedAndExposesItsHttpAndGrpcPorts() throws IOException {
        List<Instruction> dockerfile = read(GATEWAY.resolve("src/main/docker/Dockerfile.jvm"));
        List<String> copied = copiedPaths(dockerfile);
        assertTrue(copied.contains("target/quarkus-app/quarkus-run.jar"), copied.toString());
        copiedPathsExist(GATEWAY, copied);
        runsUnprivileged(dockerfile);

        Properties config = new Properties();
        try (InputStream in = Files.newInputStream(GATEWAY.resolve("src/main/resources/application.properties"))) {
            config.load(in);
        }
        // gRPC has a listener of its own, so both ports are exposed
        assertEquals("true", config.getProperty("quarkus.grpc.server.use-separate-server"));
        assertEquals(List.of(Integer.parseInt(config.getProperty("quarkus.http.port")),
                Integer.parseInt(config.getProperty("quarkus.grpc.server.port"))), exposed(dockerfile));
        namedAsDocumented(GATEWAY_IMAGE, GATEWAY.resolve("src/main/docker/Dockerfile.jvm"));
    }

    @Test
    void theSimulatorImageCopiesARunnableJarRunsUnprivilegedAndExposesTheFleetsPorts() throws Exception {
        List<Instruction> dockerfile = read(SIMULATOR.resolve("src/main/docker/Dockerfile.jvm"));
        List<String> copied = copiedPaths(dockerfile);
        copiedPathsExist(SIMULATOR, copied);
        runsUnprivileged(dockerfile);

        String entrypoint = last(dockerfile, "ENTRYPOINT");
        Matcher port = Pattern.compile("--port (\\d+)").matcher(entrypoint);
        assertTrue(entrypoint.contains("--fleet") && port.find(), entrypoint);
        assertEquals(SimFleet.ports(Integer.parseInt(port.group(1)), SimFleet.DEFAULT_FAMILIES), exposed(dockerfile));
        namedAsDocumented(SIMULATOR_IMAGE, SIMULATOR.resolve("src/main/docker/Dockerfile.jvm"));

        // the jar the image runs finds its libraries where the image puts them
        String jar = copied.stream().filter(p -> p.endsWith(".jar")).findFirst().orElseThrow();
        Process help = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                SIMULATOR.resolve(jar).toString(), "--help").redirectErrorStream(true).start();
        assertTrue(help.waitFor(30, TimeUnit.SECONDS), "the simulator did not answer --help");
        String out = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, help.exitValue(), out);
        assertTrue(out.contains("--fleet"), out);
    }

    private static List<Instruction> read(Path dockerfile) throws IOException {
        List<Instruction> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : Files.readAllLines(dockerfile)) {
            String trimmed = line.strip();
            if (current.length() == 0 && (trimmed.isEmpty() || trimmed.startsWith("#"))) {
                continue;
            }
            if (trimmed.endsWith("\\")) {
                current.append(trimmed, 0, trimmed.length() - 1).append(' ');
                continue;
            }
            current.append(trimmed);
            String[] parts = current.toString().split("\\s+", 2);
            out.add(new Instruction(parts[0].toUpperCase(), parts.length > 1 ? parts[1] : ""));
            current.setLength(0);
        }
        return out;
    }

    /** The source of every COPY (flags such as --chown left out). */
    private static List<String> copiedPaths(List<Instruction> dockerfile) {
        List<String> paths = new ArrayList<>();
        for (Instruction i : dockerfile) {
            if (i.keyword().equals("COPY") || i.keyword().equals("ADD")) {
                List<String> words = new ArrayList<>(List.of(i.arguments().split("\\s+")));
                words.removeIf(w -> w.startsWith("--"));
                assertFalse(i.keyword().equals("ADD"), "COPY, not ADD: " + i);
                paths.addAll(words.subList(0, words.size() - 1));
            }
        }
        assertFalse(paths.isEmpty(), "nothing copied");
        return paths;
    }

    private static void copiedPathsExist(Path context, List<String> paths) {
        for (String p : paths) {
            assertTrue(Files.exists(context.resolve(p)), context.resolve(p) + " does not exist after package");
        }
    }

    private static void runsUnprivileged(List<Instruction> dockerfile) {
        String user = last(dockerfile, "USER").split(":")[0];
        assertFalse(user.equals("root") || user.equals("0"), "runs as " + user);
        int userAt = -1;
        int entrypointAt = -1;
        for (int i = 0; i < dockerfile.size(); i++) {
            userAt = dockerfile.get(i).keyword().equals("USER") ? i : userAt;
            entrypointAt = dockerfile.get(i).keyword().equals("ENTRYPOINT") ? i : entrypointAt;
        }
        assertTrue(userAt >= 0 && userAt < entrypointAt, "USER before ENTRYPOINT");
    }

    /** Every port of every EXPOSE, ranges expanded. */
    private static List<Integer> exposed(List<Instruction> dockerfile) {
        List<Integer> ports = new ArrayList<>();
        for (Instruction i : dockerfile) {
            if (i.keyword().equals("EXPOSE")) {
                for (String word : i.arguments().split("\\s+")) {
                    String[] range = word.replace("/tcp", "").split("-");
                    int from = Integer.parseInt(range[0]);
                    int to = Integer.parseInt(range[range.length - 1]);
                    for (int p = from; p <= to; p++) {
                        ports.add(p);
                    }
                }
            }
        }
        return ports;
    }

    private static String last(List<Instruction> dockerfile, String keyword) {
        return dockerfile.stream().filter(i -> i.keyword().equals(keyword)).reduce((a, b) -> b)
                .orElseThrow(() -> new AssertionError("no " + keyword)).arguments();
    }

    /** README's "Container images" names the image, and the Dockerfile's build command tags it so. */
    private static void namedAsDocumented(String image, Path dockerfile) throws IOException {
        String readme = Files.readString(README);
        int section = readme.indexOf("## Container images");
        assertTrue(section >= 0, "README has no \"Container images\" section");
        assertTrue(readme.substring(section).contains("`" + image + "`"), image + " not in README");
        assertTrue(Files.readString(dockerfile).contains("-t " + image + ":"), image + " not built by " + dockerfile);
    }
}
