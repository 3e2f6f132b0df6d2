package io.handoff.gateway.telemetry;

import io.handoff.gateway.testing.OtlpExportResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * The packaged gateway exports over OTLP/HTTP (http/protobuf) to the endpoint given as
 * quarkus.otel.exporter.otlp.traces.endpoint at run time.
 */
@QuarkusIntegrationTest
@WithTestResource(value = OtlpExportResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS,
        initArgs = @ResourceArg(name = "protocol", value = "http/protobuf"))
class OtlpHttpExportIT extends OtlpExportContract {
}
