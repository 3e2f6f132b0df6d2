package io.handoff.gateway.control;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.WireMockEnginesProfile;
import io.handoff.gateway.testing.WireMockEnginesResource;
import io.handoff.openengine.v1.HealthCheck;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthState;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One endpoint's probe under its guard, against an SGLang decode engine on WireMock: a probe lost once (a reset
 * connection, a 503) is tried again in the same sample and leaves the endpoint healthy, though one failure opens its
 * breaker in this profile; a probe lost every time still marks it out.
 */
@QuarkusTest
@TestProfile(WireMockEnginesProfile.class)
class GuardedProbeTest {

    private static final String HEALTH = "/health";

    @Inject
    FleetSampler sampler;

    @Inject
    FleetHealth health;

    @Inject
    RouteRegistry routes;

    private String scenario;

    @BeforeEach
    void firstSampleDone() {
        await().atMost(Duration.ofSeconds(20)).until(() -> sampler.lastSample().isPresent());
        scenario = "probe " + UUID.randomUUID();
    }

    @AfterEach
    void healthyAgain() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.getStubMappings().stream().filter(m -> scenario.equals(m.getScenarioName()))
                .forEach(engine::removeStub);
        // close the breaker a test may have opened: a healthy sample closes it once its open period has passed
        decode().breaker().probed(true, "healthy again");
    }

    @Test
    void aProbeLostOnceLeavesTheEndpointHealthy() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.stubFor(get(urlEqualTo(HEALTH)).atPriority(1).inScenario(scenario)
                .whenScenarioStateIs(Scenario.STARTED).willSetStateTo("reset")
                .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        engine.stubFor(get(urlEqualTo(HEALTH)).atPriority(1).inScenario(scenario)
                .whenScenarioStateIs("reset").willSetStateTo("answered")
                .willReturn(aResponse().withStatus(200)));
        int before = engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size();

        FleetSampler.EndpointSample sample = sample();

        assertTrue(sample.status().healthy(), sample.status().detail());
        assertEquals(before + 2, engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size(),
                "the lost probe was tried once more");
        assertTrue(decode().breaker().admits(), decode().breaker().lastFailure());
        assertEquals(HealthState.HEALTH_STATE_READY, endpointCheck().getState(), endpointCheck().getMessage());
    }

    @Test
    void aProbeLostOnEveryTryMarksTheEndpointOut() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.stubFor(get(urlEqualTo(HEALTH)).atPriority(1).inScenario(scenario)
                .willReturn(aResponse().withStatus(503)));
        int before = engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size();

        FleetSampler.EndpointSample sample = sample();

        assertFalse(sample.status().healthy(), sample.status().detail());
        assertEquals(before + 2, engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size(),
                "one try and one retry");
        assertFalse(decode().breaker().admits(), "one failure opens the breaker in this profile");
        assertEquals(HealthState.HEALTH_STATE_NOT_READY, endpointCheck().getState(), endpointCheck().getMessage());
    }

    private FleetSampler.EndpointSample sample() {
        Route route = route();
        return sampler.sample(route, "decode", route.decode(), decode()).await().atMost(Duration.ofSeconds(30));
    }

    private HealthCheck endpointCheck() {
        String name = "route/" + WireMockEnginesResource.ROUTE + "/decode/" + WireMockEnginesResource.DECODE;
        return health.health(HealthRequest.newBuilder().setModel(WireMockEnginesResource.ROUTE).build())
                .await().atMost(Duration.ofSeconds(10)).getChecksList().stream()
                .filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
    }

    private Route route() {
        return routes.named(WireMockEnginesResource.ROUTE).orElseThrow();
    }

    private PooledEndpoint decode() {
        return route().decode().member(WireMockEnginesResource.DECODE).orElseThrow();
    }
}
