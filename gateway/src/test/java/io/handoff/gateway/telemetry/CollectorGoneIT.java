package io.handoff.gateway.telemetry;

import io.handoff.gateway.testing.FleetRoutes;
import io.handoff.gateway.testing.OtlpExportResource;
import io.handoff.openengine.v1.GenerateResponse;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The collector goes away while the packaged gateway exports to it: requests go on as before (each one ends within
 * its deadline; export happens off the request path, from a bounded queue), and the failed exports are reported by a
 * rate-limited warning, not one per batch.
 */
@QuarkusIntegrationTest
@WithTestResource(value = OtlpExportResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS,
        initArgs = @ResourceArg(name = "protocol", value = "grpc"))
class CollectorGoneIT {

    private static final String FAILED = "Failed to export";
    /** What the exporter's rate-limited logger says once it stops logging every failure. */
    private static final String THROTTLED = "Too many log messages detected";
    /** The exporter's logger lets this many warnings through in a minute before it throttles itself to one a minute. */
    private static final int WARNINGS_BEFORE_THROTTLE = 5;

    @Test
    void aCollectorThatGoesAwayCostsARateLimitedWarningAndNoRequest() throws Exception {
        OtlpExportContract.generate("gone-before", FleetRoutes.VLLM_CONTEXT_FIRST);
        OtlpExportContract.requestSpan("gone-before");

        OtlpExportResource.receiver().close();
        // requests go on until the exporter has failed often enough to throttle its warnings (each failed export
        // takes its retries, about a second); each one ends, within its deadline
        int sent = 0;
        while (!OtlpExportResource.log().contains(THROTTLED)) {
            assertTrue(sent < 200, "the exporter's warnings were never throttled:\n" + warnings());
            List<GenerateResponse> events = OtlpExportContract.generate("gone-" + sent++,
                    FleetRoutes.VLLM_CONTEXT_FIRST);
            assertTrue(events.get(events.size() - 1).hasFinished(), events.toString());
        }
        // five warnings, the notice that it throttles, then at most one a minute (this test lasts less)
        assertTrue(warnings().size() <= WARNINGS_BEFORE_THROTTLE + 1, String.join("\n", warnings()));
    }

    private static List<String> warnings() {
        return OtlpExportResource.log().lines().filter(l -> l.contains(FAILED)).toList();
    }
}
