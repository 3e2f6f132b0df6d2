package io.handoff.gateway.api.edge;

import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that gives up on its calls (a deadline that passes, a stream it cancels) must not fail the other calls
 * on its connection: a proxy multiplexes many clients on one HTTP/2 connection. The gateway may still be working on
 * a call when its client resets it; the late answer must go nowhere rather than tear the connection down. Both
 * listeners: gRPC, and HTTP/2 for the OpenAI front.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class CancelledCallIsolationTest {

    static final int BYSTANDER_CALLS = 3000;
    static final int BYSTANDER_REQUESTS = 2000;
    /** Below the HTTP listener's reset-flood cap (200 in 30 s), which closes a connection on purpose. */
    static final int HTTP_RESETS = 150;

    @TestHTTPResource("/")
    URL base;

    @Test
    void callsGivenUpOnDoNotFailTheOthersOnTheirConnection() throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            var kv = GrpcTestClient.withKey(OpenEngineKvGrpc.newBlockingStub(client.channel()),
                    ControlPlaneProfile.TEAM_A_KEY);
            var inference = GrpcTestClient.withKey(InferenceGrpc.newBlockingStub(client.channel()),
                    ControlPlaneProfile.TEAM_A_KEY);
            AtomicBoolean done = new AtomicBoolean();
            List<String> keys = new ArrayList<>();
            CompletableFuture<Integer> impatient = CompletableFuture.supplyAsync(() -> {
                int given = 0;
                for (int i = 0; !done.get(); i++) {
                    String key = "impatient-" + i;
                    keys.add(key);
                    try {
                        // 1 to 4 ms: some calls are answered, most are reset while the gateway is working on them
                        kv.withDeadlineAfter(1 + i % 4, TimeUnit.MILLISECONDS).allocateKvSession(allocation(key));
                    } catch (StatusRuntimeException e) {
                        given++;
                    }
                    Iterator<GenerateResponse> stream = inference.withDeadlineAfter(3 + i % 5, TimeUnit.MILLISECONDS)
                            .generate(GenerateRequest.newBuilder().setRequestId("impatient-gen-" + i)
                                    .setModel("m-vllm").setPrompt("a prompt long enough to be handed off ".repeat(4))
                                    .build());
                    try {
                        while (stream.hasNext()) {
                            stream.next();
                        }
                    } catch (StatusRuntimeException e) {
                        given++;
                    }
                }
                return given;
            });

            Map<String, Integer> bystanders = new TreeMap<>();
            for (int i = 0; i < BYSTANDER_CALLS; i++) {
                try {
                    kv.withDeadlineAfter(30, TimeUnit.SECONDS).getKvSession(GetKvSessionRequest.newBuilder()
                            .setSessionId("no-such-session-" + i).build());
                    bystanders.merge("answered", 1, Integer::sum);
                } catch (StatusRuntimeException e) {
                    // by code alone: a torn connection's description names each stream it lost
                    bystanders.merge(e.getStatus().getCode().name(), 1, Integer::sum);
                }
            }
            done.set(true);
            int givenUp = impatient.get(60, TimeUnit.SECONDS);

            assertTrue(givenUp > 100, "the impatient client gave up on too few calls to show anything: " + givenUp);
            assertEquals(Map.of("NOT_FOUND", BYSTANDER_CALLS), bystanders);
            releaseWhatWasAllocated(kv, keys);
        }
    }

    @Test
    void requestsResetByTheirClientDoNotFailTheOthersOnTheirHttp2Connection() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            // one connection, multiplexed, as a proxy would hold it
            HttpClient h2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false).setDefaultHost("127.0.0.1").setDefaultPort(base.getPort()),
                    new PoolOptions().setHttp2MaxSize(1));
            AtomicBoolean done = new AtomicBoolean();
            CompletableFuture<Integer> impatient = CompletableFuture.supplyAsync(() -> {
                int reset = 0;
                for (int i = 0; !done.get() && reset < HTTP_RESETS; i++) {
                    HttpClientRequest request = await(h2.request(HttpMethod.POST, "/v1/completions"));
                    // the reset is this client's own doing: nothing to report
                    request.exceptionHandler(ownReset -> { })
                            .putHeader("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY)
                            .putHeader("content-type", "application/json");
                    request.send("{\"model\":\"m-vllm\",\"stream\":true,\"max_tokens\":16,\"prompt\":\""
                            + "a prompt long enough to be handed off ".repeat(4) + "\"}");
                    pause(1 + i % 4);
                    if (request.reset()) {
                        reset++;
                    }
                }
                return reset;
            });

            Map<String, Integer> bystanders = new TreeMap<>();
            for (int i = 0; i < BYSTANDER_REQUESTS; i++) {
                try {
                    HttpClientRequest request = await(h2.request(HttpMethod.GET, "/v1/models"));
                    request.putHeader("authorization", "Bearer " + ControlPlaneProfile.TEAM_A_KEY);
                    int status = await(request.send().compose(r -> r.body().map(b -> r.statusCode())));
                    bystanders.merge(Integer.toString(status), 1, Integer::sum);
                } catch (RuntimeException e) {
                    bystanders.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                }
            }
            done.set(true);
            int reset = impatient.get(60, TimeUnit.SECONDS);

            assertEquals(HTTP_RESETS, reset, "the impatient client reset too few requests to show anything");
            assertEquals(Map.of("200", BYSTANDER_REQUESTS), bystanders);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static AllocateKvSessionRequest allocation(String key) {
        return AllocateKvSessionRequest.newBuilder().setRequestId(key).setModel("m-vllm").setIdempotencyKey(key)
                .build();
    }

    /** The same idempotency key answers the session an answer-less call made, so nothing stays behind. */
    private static void releaseWhatWasAllocated(OpenEngineKvGrpc.OpenEngineKvBlockingStub kv, List<String> keys) {
        for (String key : keys) {
            KvSession session = kv.withDeadlineAfter(30, TimeUnit.SECONDS).allocateKvSession(allocation(key));
            kv.withDeadlineAfter(30, TimeUnit.SECONDS).releaseKvSession(ReleaseKvSessionRequest.newBuilder()
                    .setSessionId(session.getRef().getSessionId()).setExpectedEpoch(session.getEpoch()).build());
        }
    }
}
