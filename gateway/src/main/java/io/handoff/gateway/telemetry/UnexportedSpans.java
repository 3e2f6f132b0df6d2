package io.handoff.gateway.telemetry;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkus.arc.Unremovable;
import io.quarkus.arc.lookup.LookupIfProperty;
import jakarta.inject.Singleton;

import java.util.Collection;

/**
 * Where the spans go while no OTLP endpoint is configured: nowhere, and without a word in the log. Spans are still
 * made, each leg's context still reaches its engine, and the log and the metrics' exemplars still carry trace ids.
 *
 * <p>The packaged gateway has Quarkus' OTLP exporter built in ({@code quarkus.otel.exporter.otlp.enabled} is a
 * build-time property and stays on), and an endpoint given at run time
 * ({@code QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}, or {@code OTEL_EXPORTER_OTLP_ENDPOINT} as application.properties
 * maps it) sends the spans there. With none, Quarkus would export to {@code localhost:4317} and log a failure for every
 * batch; its OTLP exporter steps aside when the application has a {@link SpanExporter} bean of its own, and this is that
 * bean, looked up only while the endpoint is missing (the traces endpoint falls back to
 * {@code quarkus.otel.exporter.otlp.endpoint}, so either one given counts).
 */
@Singleton
@Unremovable
@LookupIfProperty(name = UnexportedSpans.ENDPOINT, stringValue = "", lookupIfMissing = true)
public class UnexportedSpans implements SpanExporter {

    /** The OTLP endpoint of traces; an empty value is a missing one. */
    static final String ENDPOINT = "quarkus.otel.exporter.otlp.traces.endpoint";

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}
