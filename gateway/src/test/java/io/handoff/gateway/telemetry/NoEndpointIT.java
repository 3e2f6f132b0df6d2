package io.handoff.gateway.telemetry;

import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.OtlpExportResource;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged gateway given no OTLP endpoint: requests are still traced (the log line names the trace, the engines
 * are called in it) but nothing is exported and nothing about export is logged. Quarkus' exporter, built in, would
 * otherwise send to localhost:4317 and log a failure for every batch.
 */
@QuarkusIntegrationTest
@WithTestResource(value = OtlpExportResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class NoEndpointIT {

    @Test
    void requestsAreTracedButNothingIsExportedAndNothingAboutExportIsLogged() throws Exception {
        // each Generate takes a simulated prefill of 150 ms: the exporter's batches come every 50 ms meanwhile
        for (int i = 0; i < 5; i++) {
            String requestId = "no-endpoint-" + i;
            List<GenerateResponse> events = OtlpExportContract.generate(requestId,
                    FleetRoutes.VLLM_CONTEXT_FIRST);
            assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());
            String traceId = OtlpExportContract.loggedTraceId(requestId);
            assertTrue(OtlpExportResource.fleet().vllm().prefill().receivedTraceParents().stream()
                    .anyMatch(p -> p.startsWith("00-" + traceId + "-")), traceId);
        }
        String log = OtlpExportResource.log();
        assertFalse(log.contains("Failed to export"), log);
        assertFalse(log.contains("4317"), log);
    }
}
