package io.handoff.gateway.telemetry;

import io.handoff.gateway.testing.OtlpExportResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** The packaged gateway exports over OTLP/gRPC to the endpoint given as OTEL_EXPORTER_OTLP_ENDPOINT at run time. */
@QuarkusIntegrationTest
@WithTestResource(value = OtlpExportResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS,
        initArgs = @ResourceArg(name = "protocol", value = "grpc"))
class OtlpGrpcExportIT extends OtlpExportContract {
}
