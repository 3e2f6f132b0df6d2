package io.handoff.gateway.api.edge;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.DocumentedKeys;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.grpc.stub.MetadataUtils;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The limits of the listener (application.properties, docs/reliability.md "The edge"): each refuses what is past it
 * with its status, and what is within it passes.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class EdgeLimitsTest {

    static final int MAX_BODY = 8 << 20;
    static final int MAX_HEADERS = 20 << 10;
    static final int MAX_INITIAL_LINE = 4096;
    static final int MAX_HEADER_LIST = 16384;
    static final int MAX_STREAMS = 100;

    @TestHTTPResource("/")
    URL base;

    private GrpcTestClient client;
    private final java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
    }

    @AfterEach
    void close() throws InterruptedException {
        client.close();
    }

    @Test
    void theLimitsAreTheDocumentedOnes() {
        var documented = DocumentedKeys.edgeLimits();
        assertEquals(8, documented.size(), documented.toString());
        for (DocumentedKeys.Key key : documented) {
            assertEquals(key.literalDefault().orElseThrow(), ConfigProvider.getConfig().getValue(key.name(),
                    String.class), key.name());
        }
    }

    @Test
    void aBodyPastTheLimitIs413AndOneWithinItIsRead() throws Exception {
        // the gateway answers as soon as the head says how long the body is, before a byte of it is sent
        for (String path : new String[] {"/v1/completions", "/v1/chat/completions", "/v1/kv-sessions"}) {
            assertEquals("HTTP/1.1 413", statusLine("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n"
                    + "Authorization: Bearer " + ControlPlaneProfile.TEAM_A_KEY + "\r\nContent-Type: application/json"
                    + "\r\nIdempotency-Key: k\r\nContent-Length: " + (MAX_BODY + 1) + "\r\n\r\n"), path);
        }
        // a body of 7 MiB is read: its model is unknown, which only reading it can tell
        HttpResponse<String> within = post("/v1/completions", "{\"model\":\"unknown-" + "y".repeat(7 << 20)
                + "\",\"prompt\":\"p\"}");
        assertEquals(404, within.statusCode(), within.body().substring(0, 200));
    }

    @Test
    void headersPastTheLimitAre431AndALongLineIs414() throws Exception {
        HttpResponse<String> big = http.send(request("/v1/models").header("x-padding", "h".repeat(MAX_HEADERS))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(431, big.statusCode());
        HttpResponse<String> fine = http.send(request("/v1/models").header("x-padding", "h".repeat(MAX_HEADERS / 2))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, fine.statusCode(), fine.body());

        HttpResponse<String> longLine = http.send(request("/v1/models?pad=" + "q".repeat(MAX_INITIAL_LINE)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(414, longLine.statusCode());
        HttpResponse<String> shortLine = http.send(request("/v1/models?pad=" + "q".repeat(MAX_INITIAL_LINE / 2))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, shortLine.statusCode(), shortLine.body());
    }

    @Test
    void aGrpcMessagePastTheLimitIsResourceExhaustedAndOneWithinItIsRead() {
        var inference = GrpcTestClient.withKey(InferenceGrpc.newBlockingStub(client.channel()),
                ControlPlaneProfile.TEAM_A_KEY).withMaxInboundMessageSize(1 << 20);
        StatusRuntimeException tooBig = assertThrows(StatusRuntimeException.class, () -> inference
                .withDeadlineAfter(30, TimeUnit.SECONDS).generate(GenerateRequest.newBuilder().setRequestId("big")
                        .setModel("m-vllm").setPrompt("p".repeat(MAX_BODY + 1)).build()).hasNext());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooBig.getStatus().getCode(), tooBig.getStatus().toString());

        // 7 MiB of attributes reach the session service, which refuses them for its own (smaller) limit
        var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                ControlPlaneProfile.TEAM_A_KEY);
        StatusRuntimeException parsed = assertThrows(StatusRuntimeException.class, () -> kv.allocateKvSession(
                AllocateKvSessionRequest.newBuilder().setRequestId("r").setModel("m-vllm").setIdempotencyKey("k")
                        .setAttributes(Struct.newBuilder().putFields("a", Value
                                .newBuilder().setStringValue("a".repeat(7 << 20)).build())).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, parsed.getStatus().getCode(), parsed.getStatus().toString());
    }

    @Test
    void metadataPastTheLimitIsRefusedAndWithinItPasses() {
        ControlGrpc.ControlBlockingStub control = GrpcTestClient.withKey(ControlGrpc.newBlockingStub(
                client.channel()), ControlPlaneProfile.TEAM_A_KEY);
        StatusRuntimeException big = assertThrows(StatusRuntimeException.class, () -> withPadding(control,
                MAX_HEADER_LIST + 1024).getServerInfo(GetServerInfoRequest.getDefaultInstance()));
        // the gateway advertises the limit in its HTTP/2 SETTINGS; grpc-java honours it and never sends the call
        assertEquals(Status.Code.INTERNAL, big.getStatus().getCode(), big.getStatus().toString());
        assertTrue(String.valueOf(big.getCause()).contains("Header size exceeded max allowed size (16384)"),
                String.valueOf(big.getCause()));
        assertTrue(withPadding(control, MAX_HEADER_LIST / 2).getServerInfo(GetServerInfoRequest.getDefaultInstance())
                .getSupportedModelsCount() > 0);
        // the connection is still good for the next call
        assertEquals(Status.Code.NOT_FOUND, assertThrows(StatusRuntimeException.class, () -> control.getModelInfo(
                GetModelInfoRequest.newBuilder().setModel("none").build())).getStatus().getCode());
    }

    @Test
    void everyConnectionOfEitherListenerIsToldHowManyStreamsItMayOpen() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            HttpClient h2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false));
            Http2Settings http = remoteSettings(h2.request(HttpMethod.GET, base.getPort(), "127.0.0.1",
                    "/q/health/live"));
            assertEquals(MAX_STREAMS, http.getMaxConcurrentStreams());
            assertEquals(MAX_HEADER_LIST, http.getMaxHeaderListSize());
            // any call will do: the gRPC listener's settings come with the connection, before its answer
            Http2Settings grpc = remoteSettings(h2.request(HttpMethod.POST, ConfigProvider.getConfig().getValue(
                    "quarkus.grpc.server.test-port", Integer.class), "127.0.0.1", "/openengine.v1.Control/none")
                    .map(r -> r.putHeader("content-type", "application/grpc").putHeader("te", "trailers")));
            assertEquals(MAX_STREAMS, grpc.getMaxConcurrentStreams());
            assertEquals(MAX_HEADER_LIST, grpc.getMaxHeaderListSize());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static Http2Settings remoteSettings(Future<HttpClientRequest> request) throws Exception {
        return request.compose(r -> r.send().map(response -> r.connection().remoteSettings()))
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** The status line the gateway answers a request head with (sent over a socket of its own, no body). */
    private String statusLine(String head) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", base.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            byte[] answer = socket.getInputStream().readNBytes(12);
            return new String(answer, StandardCharsets.US_ASCII);
        }
    }

    private static ControlGrpc.ControlBlockingStub withPadding(ControlGrpc.ControlBlockingStub stub, int bytes) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("x-padding", Metadata.ASCII_STRING_MARSHALLER), "m".repeat(bytes));
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + base.getPort() + path))
                .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY);
    }

    private HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return http.send(request(path).header("Content-Type", "application/json").header("Idempotency-Key", "k")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
