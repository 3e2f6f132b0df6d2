package io.handoff.gateway.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A certificate authority and a server certificate it signed, made with openssl when the test runs (nothing secret
 * lives in the repository, nothing expires between runs). The server certificate names 127.0.0.1 and localhost, so
 * a client that verifies host names accepts the test's own servers. PEM files, as redis-server and Quarkus' TLS
 * registry read them.
 */
public final class TestCertificates implements AutoCloseable {

    private final Path directory;

    private TestCertificates(Path directory) {
        this.directory = directory;
    }

    public static TestCertificates create() {
        Path directory;
        try {
            directory = Files.createTempDirectory("handoff-tls");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        TestCertificates certificates = new TestCertificates(directory);
        try {
            certificates.make();
            return certificates;
        } catch (RuntimeException failure) {
            certificates.close();
            throw failure;
        }
    }

    private void make() {
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=handoff test CA", "-keyout", caKey().toString(), "-out", caCertificate().toString());
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", serverKey().toString(), "-out", directory.resolve("server.csr").toString());
        Path extensions = directory.resolve("server.ext");
        try {
            Files.writeString(extensions, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        openssl("x509", "-req", "-in", directory.resolve("server.csr").toString(), "-CA", caCertificate().toString(),
                "-CAkey", caKey().toString(), "-CAcreateserial", "-days", "2", "-extfile", extensions.toString(),
                "-out", serverCertificate().toString());
    }

    /** The authority's certificate: what a client trusts. */
    public Path caCertificate() {
        return directory.resolve("ca.crt");
    }

    public Path serverCertificate() {
        return directory.resolve("server.crt");
    }

    public Path serverKey() {
        return directory.resolve("server.key");
    }

    private Path caKey() {
        return directory.resolve("ca.key");
    }

    /** The redis-server arguments that serve TLS with these certificates (client certificates not asked for). */
    public List<String> redisServerArguments() {
        return List.of("--tls-cert-file", serverCertificate().toString(), "--tls-key-file", serverKey().toString(),
                "--tls-ca-cert-file", caCertificate().toString(), "--tls-auth-clients", "no");
    }

    @Override
    public void close() {
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind harms nothing
        }
    }

    private void openssl(String... arguments) {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        try {
            Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                    .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("openssl is not installed (apt-get install openssl)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
