package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Refusals whose OpenEngine code other causes share, told apart by the {@code reason} label of
 * {@code handoff_generate_refused_total}: an emptied pool is INTERNAL as a pool whose breakers are all open is
 * ({@link EndpointBreakerStateTest}), a store that does not answer is OVERLOADED as a rate limit or a full route is.
 * Over real gRPC, Redis and simulated engines.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class RefusalReasonsTest extends ControlPlaneTest {

    @Inject
    MeterRegistry registry;

    @Test
    void aPoolWhoseEndpointsWereAllRetiredIsCountedAsPoolEmpty() {
        double counted = refused("vllm", ErrorCode.ERROR_CODE_INTERNAL, "pool-empty");
        double breakers = refused("vllm", ErrorCode.ERROR_CODE_INTERNAL, "breakers-open");
        admin().delete("/admin/routes/vllm/pools/prefill/endpoints/p-0").then().statusCode(200);
        try {
            GenerateCall call = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
            assertEquals(Status.Code.UNAVAILABLE, call.awaitEnd().getCode());
            assertEquals(ErrorCode.ERROR_CODE_INTERNAL.name(), call.errorCode());
        } finally {
            admin().contentType("application/json").body(new JsonObject().put("name", "p-0")
                    .put("url", SimFleetTestResource.engine(Family.VLLM, Role.PREFILL).baseUrl()).encode())
                    .post("/admin/routes/vllm/pools/prefill/endpoints").then().statusCode(201);
        }
        assertEquals(counted + 1, refused("vllm", ErrorCode.ERROR_CODE_INTERNAL, "pool-empty"));
        assertEquals(breakers, refused("vllm", ErrorCode.ERROR_CODE_INTERNAL, "breakers-open"), "not as breakers");
    }

    @Test
    void aStoreThatDoesNotAnswerIsCountedAsStoreUnavailable() {
        double counted = refused("vllm", ErrorCode.ERROR_CODE_OVERLOADED, "store-unavailable");
        RedisTestResource.server().stop();
        try {
            GenerateCall call = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-vllm", 4);
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, call.awaitEnd().getCode());
            assertEquals(ErrorCode.ERROR_CODE_OVERLOADED.name(), call.errorCode());
        } finally {
            RedisTestResource.server().start();
        }
        assertEquals(counted + 1, refused("vllm", ErrorCode.ERROR_CODE_OVERLOADED, "store-unavailable"));
    }

    private double refused(String route, ErrorCode code, String reason) {
        Counter counter = registry.find("handoff.generate.refused").tag("route", route).tag("code", code.name())
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private RequestSpecification admin() {
        return RestAssured.given().baseUri(base.toString())
                .header("authorization", "Bearer " + ControlPlaneProfile.ADMIN_KEY);
    }
}
