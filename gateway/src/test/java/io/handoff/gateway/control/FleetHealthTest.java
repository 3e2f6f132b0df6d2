package io.handoff.gateway.control;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RedisTestResource;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.HealthCheck;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.HealthState;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Control.Health as pools and Redis go down and come back, over real gRPC, Redis and simulated engines. */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class FleetHealthTest extends ControlPlaneTest {

    @Inject
    FleetSampler sampler;

    @Inject
    MutableClock clock;

    @BeforeEach
    void sample() {
        sampler.sampleNow().await().indefinitely();
    }

    private HealthResponse health() {
        return control.health(HealthRequest.getDefaultInstance());
    }

    private static HealthCheck check(HealthResponse health, String name) {
        return health.getChecksList().stream().filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no check " + name + " in " + health));
    }

    @Test
    void aCheckPerRoutePoolAndStoreAndWrongRolesSaySo() {
        HealthResponse health = health();
        assertEquals(HealthState.HEALTH_STATE_READY, check(health, "session-store/redis").getState());
        for (String route : new String[] {"vllm", "sglang", "trtllm"}) {
            assertEquals(HealthState.HEALTH_STATE_READY, check(health, "route/" + route).getState(), route);
            assertEquals(HealthState.HEALTH_STATE_READY, check(health, "route/" + route + "/prefill").getState());
            assertEquals(HealthState.HEALTH_STATE_READY, check(health, "route/" + route + "/decode").getState());
        }
        HealthCheck wrongRole = check(health, "route/wrong-role/prefill/p-0");
        assertEquals(HealthState.HEALTH_STATE_NOT_READY, wrongRole.getState());
        assertTrue(wrongRole.getMessage().contains("wrong role")
                && wrongRole.getMessage().contains("answers as DECODE"), wrongRole.getMessage());
        assertEquals(HealthState.HEALTH_STATE_NOT_READY, check(health, "route/wrong-role").getState());
        HealthCheck wrongModel = check(health, "route/wrong-model/decode/d-0");
        assertEquals(HealthState.HEALTH_STATE_NOT_READY, wrongModel.getState());
        assertTrue(wrongModel.getMessage().contains("does not serve model 'sim-model'"), wrongModel.getMessage());
        // some routes serve, some cannot: the whole is degraded
        assertEquals(HealthState.HEALTH_STATE_DEGRADED, health.getState());
    }

    @Test
    void aPoolThatGoesDownAndComesBack() {
        SimEngine decode = SimFleetTestResource.engine(Family.TRTLLM, Role.DECODE);
        decode.crash(-1);
        try {
            sampler.sampleNow().await().indefinitely();
            HealthResponse down = health();
            assertEquals(HealthState.HEALTH_STATE_NOT_READY, check(down, "route/trtllm/decode").getState());
            assertEquals(HealthState.HEALTH_STATE_NOT_READY, check(down, "route/trtllm").getState());
            assertEquals(HealthState.HEALTH_STATE_READY, check(down, "route/trtllm/prefill").getState());
            assertEquals(HealthState.HEALTH_STATE_READY, check(down, "route/vllm").getState());
            assertEquals(HealthState.HEALTH_STATE_DEGRADED, down.getState());
        } finally {
            decode.restart();
        }
        // one failed probe is one failure against the breaker, not a verdict: the next healthy sample brings it back
        sampler.sampleNow().await().indefinitely();
        HealthResponse back = health();
        assertEquals(HealthState.HEALTH_STATE_READY, check(back, "route/trtllm/decode/d-0").getState());
        assertEquals(HealthState.HEALTH_STATE_READY, check(back, "route/trtllm").getState());
    }

    @Test
    void redisGoingDownMakesTheWholeNotReady() {
        RedisTestResource.server().stop();
        try {
            HealthResponse down = health();
            assertEquals(HealthState.HEALTH_STATE_NOT_READY, down.getState());
            HealthCheck store = check(down, "session-store/redis");
            assertEquals(HealthState.HEALTH_STATE_NOT_READY, store.getState());
            assertTrue(store.getMessage().contains("does not answer"), store.getMessage());
        } finally {
            RedisTestResource.server().start();
        }
        HealthResponse back = health();
        assertEquals(HealthState.HEALTH_STATE_READY, check(back, "session-store/redis").getState());
        assertEquals(HealthState.HEALTH_STATE_DEGRADED, back.getState(), "the wrong-role and wrong-model routes");
    }

    @Test
    void inferenceProbeSendsAMinimalRequestThroughTheRoute() {
        HealthResponse vllm = control.health(HealthRequest.newBuilder().setModel("m-vllm")
                .setIncludeInferenceProbe(true).build());
        HealthCheck probe = check(vllm, "inference/vllm");
        assertEquals(HealthState.HEALTH_STATE_READY, probe.getState(), probe.getMessage());
        assertEquals(HealthState.HEALTH_STATE_READY, vllm.getState());
        assertFalse(vllm.getChecksList().stream().anyMatch(c -> c.getName().startsWith("route/sglang")));

        HealthResponse wrong = control.health(HealthRequest.newBuilder().setModel("m-wrong-role")
                .setIncludeInferenceProbe(true).build());
        HealthCheck refused = check(wrong, "inference/wrong-role");
        assertEquals(HealthState.HEALTH_STATE_NOT_READY, refused.getState());
        assertTrue(refused.getMessage().contains("no prefill endpoint"), refused.getMessage());
    }

    @Test
    void aRoleOfInterestNarrowsTheChecksToItsPools() {
        HealthResponse decodeOnly = control.health(HealthRequest.newBuilder().setModel("m-wrong-role")
                .setRole(EngineRole.ENGINE_ROLE_DECODE).build());
        assertEquals(HealthState.HEALTH_STATE_READY, check(decodeOnly, "route/wrong-role").getState());
        assertFalse(decodeOnly.getChecksList().stream().anyMatch(c -> c.getName().contains("/prefill")));
    }
}
