package io.handoff.gateway.control;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GrpcTestClient;
import io.handoff.openengine.v1.ControlGrpc;
import io.quarkus.test.common.http.TestHTTPResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.net.URL;

/**
 * What the control-plane tests share: a real gRPC client on loopback to the gateway of {@link ControlPlaneProfile}
 * and a Control stub for team-a. Subclasses are {@code @QuarkusTest @TestProfile(ControlPlaneProfile.class)}, so
 * Quarkus starts once for all of them.
 */
abstract class ControlPlaneTest {

    @TestHTTPResource("/")
    URL base;

    GrpcTestClient client;
    ControlGrpc.ControlBlockingStub control;

    @BeforeEach
    void connect() {
        client = GrpcTestClient.ofGateway();
        control = control(ControlPlaneProfile.TEAM_A_KEY);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        client.close();
    }

    ControlGrpc.ControlBlockingStub control(String apiKey) {
        return GrpcTestClient.withKey(ControlGrpc.newBlockingStub(client.channel()), apiKey);
    }
}
