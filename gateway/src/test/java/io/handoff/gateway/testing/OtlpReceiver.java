package io.handoff.gateway.testing;

import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real OTLP trace receiver on a free loopback port, as a collector would be: OTLP/gRPC (the
 * {@code opentelemetry.proto.collector.trace.v1.TraceService/Export} call, on grpc-java) or OTLP/HTTP
 * ({@code POST /v1/traces} with an {@code application/x-protobuf} body, on Vert.x), decoding the OTLP protobufs of
 * {@code io.opentelemetry.proto}. It keeps every span it received with its resource.
 */
public final class OtlpReceiver implements AutoCloseable {

    /** The OTLP protocols, by the names {@code quarkus.otel.exporter.otlp.protocol} takes. */
    public enum Protocol {
        GRPC("grpc"), HTTP_PROTOBUF("http/protobuf");

        private final String configName;

        Protocol(String configName) {
            this.configName = configName;
        }

        public String configName() {
            return configName;
        }

        public static Protocol of(String configName) {
            for (Protocol p : values()) {
                if (p.configName.equals(configName)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("no OTLP protocol " + configName);
        }
    }

    /** One received span and the resource it was exported under. */
    public record Received(Resource resource, Span span) {

        public String traceId() {
            return HexFormat.of().formatHex(span.getTraceId().toByteArray());
        }

        public String spanId() {
            return HexFormat.of().formatHex(span.getSpanId().toByteArray());
        }

        public String parentSpanId() {
            return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
        }

        public String name() {
            return span.getName();
        }

        /** A string, int or boolean attribute of the span, as text. */
        public Optional<String> attribute(String key) {
            return OtlpReceiver.attribute(span.getAttributesList(), key);
        }

        public Optional<String> resourceAttribute(String key) {
            return OtlpReceiver.attribute(resource.getAttributesList(), key);
        }
    }

    private static final String SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService";
    private static final MethodDescriptor<ExportTraceServiceRequest, ExportTraceServiceResponse> EXPORT =
            MethodDescriptor.<ExportTraceServiceRequest, ExportTraceServiceResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Export"))
                    .setRequestMarshaller(ProtoUtils.marshaller(ExportTraceServiceRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(ExportTraceServiceResponse.getDefaultInstance()))
                    .build();

    private final Protocol protocol;
    private final List<Received> spans = new CopyOnWriteArrayList<>();
    private final AtomicInteger exports = new AtomicInteger();
    private Server grpc;
    private Vertx vertx;
    private HttpServer http;
    private int port;

    private OtlpReceiver(Protocol protocol) {
        this.protocol = protocol;
    }

    /** A receiver of this protocol, listening on a free loopback port. */
    public static OtlpReceiver start(Protocol protocol) {
        OtlpReceiver r = new OtlpReceiver(protocol);
        if (protocol == Protocol.GRPC) {
            r.startGrpc();
        } else {
            r.startHttp();
        }
        return r;
    }

    private void startGrpc() {
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(EXPORT, ServerCalls.asyncUnaryCall((request, answer) -> {
                    received(request);
                    answer.onNext(ExportTraceServiceResponse.getDefaultInstance());
                    answer.onCompleted();
                }))
                .build();
        try {
            grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service).build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        port = grpc.getPort();
    }

    private void startHttp() {
        vertx = Vertx.vertx();
        http = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(request -> {
                    if (!request.path().equals("/v1/traces")) {
                        request.response().setStatusCode(404).end();
                        return;
                    }
                    request.body().onSuccess(body -> {
                        try {
                            received(ExportTraceServiceRequest.parseFrom(body.getBytes()));
                        } catch (IOException e) {
                            request.response().setStatusCode(400).end();
                            return;
                        }
                        request.response().putHeader("content-type", "application/x-protobuf")
                                .end(Buffer.buffer(ExportTraceServiceResponse.getDefaultInstance().toByteArray()));
                    });
                });
        port = http.listen().toCompletionStage().toCompletableFuture().join().actualPort();
    }

    private void received(ExportTraceServiceRequest request) {
        exports.incrementAndGet();
        for (ResourceSpans rs : request.getResourceSpansList()) {
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span s : ss.getSpansList()) {
                    spans.add(new Received(rs.getResource(), s));
                }
            }
        }
    }

    public Protocol protocol() {
        return protocol;
    }

    /** The base URL an exporter is given (the HTTP exporter adds {@code /v1/traces} to it). */
    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Every span received so far, in the order they arrived. */
    public List<Received> spans() {
        return List.copyOf(spans);
    }

    /** How many export calls arrived. */
    public int exports() {
        return exports.get();
    }

    /** The collector goes away: the port stops accepting connections. */
    @Override
    public void close() {
        if (grpc != null) {
            grpc.shutdownNow();
            try {
                grpc.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            grpc = null;
        }
        if (vertx != null) {
            vertx.close().toCompletionStage().toCompletableFuture().join();
            vertx = null;
        }
    }

    static Optional<String> attribute(List<KeyValue> attributes, String key) {
        return attributes.stream().filter(kv -> kv.getKey().equals(key)).findFirst().map(kv -> text(kv.getValue()));
    }

    private static String text(AnyValue v) {
        return switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> Long.toString(v.getIntValue());
            case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
            case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
            default -> v.toString();
        };
    }
}
