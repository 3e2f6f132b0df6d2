package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.StoppingOptions;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/**
 * One tenant's calls to one gateway replica, each answered as the client saw it: the status (HTTP, or gRPC's code),
 * the wait the gateway asked for ({@code Retry-After}, or the {@code retry-after-ms} trailer) and the error body.
 * The tenant is the one whose API key the calls present.
 */
final class TenantCalls implements AutoCloseable {

    /** One answer: {@code status} is the HTTP status or the gRPC code's name; {@code retryAfter} null when none. */
    record Answer(String status, String retryAfter, JsonNode body) {

        boolean accepted() {
            return status.equals("200") || status.equals("201") || status.equals("OK");
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> RETRY_AFTER_MS =
            Metadata.Key.of("retry-after-ms", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> ERROR_CODE =
            Metadata.Key.of("handoff-error-code", Metadata.ASCII_STRING_MARSHALLER);

    private final GatewayReplica replica;
    private final String apiKey;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final ManagedChannel channel;

    TenantCalls(GatewayReplica replica, String apiKey) {
        this.replica = replica;
        this.apiKey = apiKey;
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", replica.grpcPort()).usePlaintext().build();
    }

    String replicaId() {
        return replica.id();
    }

    /** {@code POST /v1/kv-sessions}: a raw allocation, charged one request. */
    Answer allocateOverRest(String requestId, String model) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode().put("request_id", requestId).put("model", model);
        return send(HttpRequest.newBuilder(URI.create(replica.baseUrl() + "/v1/kv-sessions"))
                .header("Idempotency-Key", requestId).POST(HttpRequest.BodyPublishers.ofString(body.toString())));
    }

    /** {@code POST /v1/completions}, not streamed: answered when the generation ended. */
    Answer completion(String requestId, String model, String prompt, int maxTokens)
            throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode().put("model", model).put("prompt", prompt)
                .put("max_tokens", maxTokens).put("stream", false);
        return send(HttpRequest.newBuilder(URI.create(replica.baseUrl() + "/v1/completions"))
                .header("X-Request-Id", requestId).POST(HttpRequest.BodyPublishers.ofString(body.toString())));
    }

    /** gRPC {@code AllocateKvSession}. */
    Answer allocateOverGrpc(String requestId, String model) {
        AllocateKvSessionRequest req = AllocateKvSessionRequest.newBuilder().setRequestId(requestId).setModel(model)
                .setIdempotencyKey(requestId).build();
        try {
            OpenEngineKvGrpc.newBlockingStub(channel).withInterceptors(authorization())
                    .withDeadlineAfter(30, TimeUnit.SECONDS).allocateKvSession(req);
            return new Answer("OK", null, null);
        } catch (StatusRuntimeException e) {
            return refused(e);
        }
    }

    /** gRPC {@code Inference/Generate}, read to its end. */
    Answer generateOverGrpc(String requestId, String model, String prompt, int maxTokens) {
        GenerateRequest req = GenerateRequest.newBuilder().setRequestId(requestId).setModel(model).setPrompt(prompt)
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
        try {
            Iterator<?> events = InferenceGrpc.newBlockingStub(channel).withInterceptors(authorization())
                    .withDeadlineAfter(60, TimeUnit.SECONDS).generate(req);
            while (events.hasNext()) {
                events.next();
            }
            return new Answer("OK", null, null);
        } catch (StatusRuntimeException e) {
            return refused(e);
        }
    }

    /** The replica's Prometheus scrape, {@code GET /q/metrics} (the management interface is off in this build). */
    String metrics() throws IOException, InterruptedException {
        HttpResponse<String> res = http.send(HttpRequest.newBuilder(URI.create(replica.baseUrl() + "/q/metrics"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new IOException("/q/metrics of " + replica.id() + " answered " + res.statusCode());
        }
        return res.body();
    }

    private Answer send(HttpRequest.Builder request) throws IOException, InterruptedException {
        HttpResponse<String> res = http.send(request.timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + apiKey).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode body = res.body().isBlank() ? null : JSON.readTree(res.body());
        return new Answer(Integer.toString(res.statusCode()), res.headers().firstValue("Retry-After").orElse(null),
                body);
    }

    /** A gRPC refusal as an answer: its body is the trailer {@code handoff-error-code} and the description. */
    private static Answer refused(StatusRuntimeException e) {
        Metadata trailers = Status.trailersFromThrowable(e);
        ObjectNode error = JSON.createObjectNode().put("message", e.getStatus().getDescription())
                .put("code", trailers == null ? null : trailers.get(ERROR_CODE));
        return new Answer(e.getStatus().getCode().name(), trailers == null ? null : trailers.get(RETRY_AFTER_MS),
                JSON.createObjectNode().set("error", error));
    }

    private ClientInterceptor authorization() {
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, "Bearer " + apiKey);
        return MetadataUtils.newAttachHeadersInterceptor(md);
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
