package io.handoff.gateway.deploy;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Nothing under {@code deploy/} escapes the tests: each file is the README, a Kubernetes manifest (ManifestsIT), a
 * Grafana dashboard or a set of Prometheus rules (DashboardMetricsTest). A file put anywhere else would rot unseen.
 */
class DeployFolderTest {

    @Test
    void everyFileUnderDeployIsOneATestReads() throws IOException {
        List<String> unread = DeployFiles.filesUnder(DeployFiles.DEPLOY).stream()
                .map(f -> DeployFiles.DEPLOY.relativize(f).toString().replace('\\', '/'))
                .filter(f -> !isRead(f)).toList();
        assertEquals(List.of(), unread);
    }

    private static boolean isRead(String path) {
        return path.equals("README.md") || path.matches("kubernetes/[^/]+\\.ya?ml")
                || path.matches("grafana/[^/]+\\.json") || path.matches("prometheus/[^/]+\\.ya?ml");
    }
}
