package io.handoff.gateway.api.edge;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.OpenEngineKvGrpc;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With {@code quarkus.management.enabled=true}, health and metrics answer on the management port and not on the
 * public one, where the APIs go on answering; and a connection left idle past {@code quarkus.http.idle-timeout} is
 * closed by the gateway, on the HTTP listener and on the gRPC listener (which takes its idle time from the same key).
 */
@QuarkusTest
@TestProfile(ManagementInterfaceProfile.class)
class ManagementInterfaceTest {

    @TestHTTPResource("/")
    URL publicBase;

    @TestHTTPResource(value = "/", management = true)
    URL managementBase;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void healthAndMetricsAnswerOnTheManagementPortOnly() throws Exception {
        assertNotEquals(publicBase.getPort(), managementBase.getPort());
        for (String path : new String[] {"q/health", "q/health/live", "q/health/ready", "q/metrics"}) {
            HttpResponse<String> managed = get(managementBase, path);
            assertEquals(200, managed.statusCode(), path + ": " + managed.body());
            assertEquals(404, get(publicBase, path).statusCode(), path + " on the public port");
        }
        assertTrue(get(managementBase, "q/metrics").body().contains("handoff_"), "the gateway's own metrics");
        assertEquals(200, get(publicBase, "v1/models").statusCode(), "the public APIs stay where they were");
    }

    @Test
    void anIdleConnectionIsClosedByTheGateway() throws Exception {
        try (Socket socket = new Socket(publicBase.getHost(), publicBase.getPort())) {
            socket.setSoTimeout((int) Duration.ofSeconds(60).toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(("GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            int n = in.read(buffer);
            assertTrue(new String(buffer, 0, n, StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200"));
            // then nothing is sent: the gateway closes the connection after the idle timeout (read sees the end)
            long started = System.nanoTime();
            int read;
            do {
                read = in.read(buffer);
            } while (read > 0);
            assertEquals(-1, read);
            assertTrue(System.nanoTime() - started < Duration.ofSeconds(30).toNanos());
        }
    }

    @Test
    void anIdleGrpcConnectionIsClosedByTheGateway() throws Exception {
        try (GrpcTestClient client = GrpcTestClient.ofGateway()) {
            ManagedChannel channel = client.channel();
            StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class,
                    () -> OpenEngineKvGrpc.newBlockingStub(channel)
                            .getKvSession(GetKvSessionRequest.newBuilder().setSessionId("no-such-session").build()));
            assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
            assertEquals(ConnectivityState.READY, channel.getState(false), "the call left a connection open");
            // then no call: the gateway sends GOAWAY after the idle timeout, and the channel, with nothing to do,
            // goes idle (its own idle timer is grpc-java's 30 minutes, so only the gateway can end it this soon)
            CountDownLatch left = new CountDownLatch(1);
            channel.notifyWhenStateChanged(ConnectivityState.READY, left::countDown);
            assertTrue(left.await(30, TimeUnit.SECONDS), "the gateway kept an idle gRPC connection open");
            assertEquals(ConnectivityState.IDLE, channel.getState(false));
        }
    }

    private HttpResponse<String> get(URL base, String path) throws Exception {
        // the port only: the injected URL may carry the management root path
        return http.send(HttpRequest.newBuilder(URI.create("http://" + base.getHost() + ":" + base.getPort() + "/"
                + path)).GET()
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
