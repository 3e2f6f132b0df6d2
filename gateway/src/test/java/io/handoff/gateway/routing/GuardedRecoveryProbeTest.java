package io.handoff.gateway.routing;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.WireMockEnginesProfile;
import io.handoff.gateway.testing.WireMockEnginesResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Set;
import java.util.UUID;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An open breaker's recovery probe under the pool's probe guard, against an SGLang decode engine on WireMock: once the
 * open period has passed (on the injected clock), the next choice in the pool probes the endpoint, and a probe lost
 * once (a reset connection) is tried again and closes the breaker, instead of opening it for another whole period.
 */
@QuarkusTest
@TestProfile(WireMockEnginesProfile.class)
class GuardedRecoveryProbeTest {

    private static final String HEALTH = "/health";

    @Inject
    RouteRegistry routes;

    @Inject
    MutableClock clock;

    private String scenario;

    @BeforeEach
    void freshScenario() {
        scenario = "recovery probe " + UUID.randomUUID();
    }

    @AfterEach
    void healthyAgain() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.getStubMappings().stream().filter(m -> scenario.equals(m.getScenarioName()))
                .forEach(engine::removeStub);
        decode().breaker().probed(true, "healthy again");
    }

    @Test
    void anOpenBreakerWhoseRecoveryProbeIsLostOnceStillCloses() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.stubFor(get(urlEqualTo(HEALTH)).atPriority(1).inScenario(scenario)
                .whenScenarioStateIs(Scenario.STARTED).willSetStateTo("reset")
                .willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        engine.stubFor(get(urlEqualTo(HEALTH)).atPriority(1).inScenario(scenario)
                .whenScenarioStateIs("reset").willSetStateTo("answered")
                .willReturn(aResponse().withStatus(200)));
        EndpointBreaker breaker = decode().breaker();
        breaker.trip("connection refused");
        int before = engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size();

        clock.advance(route().settings().breakerOpenFor());
        assertTrue(route().decode().acquire(Set.of(decode().endpoint())).isEmpty(),
                "the only endpoint is excluded: the choice only starts the recovery probe");

        await("the recovery probe answered").atMost(Duration.ofSeconds(20))
                .until(() -> breaker.state() != EndpointBreaker.State.PROBING);
        assertEquals(EndpointBreaker.State.CLOSED, breaker.state(), breaker.lastFailure());
        assertEquals(before + 2, engine.findAll(getRequestedFor(urlEqualTo(HEALTH))).size(),
                "the lost probe was tried once more");
    }

    private Route route() {
        return routes.named(WireMockEnginesResource.ROUTE).orElseThrow();
    }

    private PooledEndpoint decode() {
        return route().decode().member(WireMockEnginesResource.DECODE).orElseThrow();
    }
}
