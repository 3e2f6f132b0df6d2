package io.handoff.gateway.routing;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.ShortProbeTimeoutProfile;
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
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An open breaker's recovery probe that never answers, against an SGLang decode engine on WireMock whose
 * {@code /health} hangs far longer than the test waits: the guard's timeout cuts each try off, and the breaker opens
 * again with that reason, for another period, instead of staying PROBING (its endpoint out, and never probed again)
 * until the engine answers.
 */
@QuarkusTest
@TestProfile(ShortProbeTimeoutProfile.class)
class HungRecoveryProbeTest {

    /** Longer than the test waits for the breaker, so that only the guard can end the probe in time. */
    private static final int HANG_MS = 20_000;

    @Inject
    RouteRegistry routes;

    @Inject
    MutableClock clock;

    private String scenario;

    @BeforeEach
    void freshScenario() {
        scenario = "hung recovery probe " + UUID.randomUUID();
    }

    @AfterEach
    void healthyAgain() {
        WireMockServer engine = WireMockEnginesResource.decode();
        engine.getStubMappings().stream().filter(m -> scenario.equals(m.getScenarioName()))
                .forEach(engine::removeStub);
        decode().breaker().probed(true, "healthy again");
    }

    @Test
    void aHungRecoveryProbeTimesOutAndTheBreakerOpensAgain() {
        WireMockEnginesResource.decode().stubFor(get(urlEqualTo("/health")).atPriority(1).inScenario(scenario)
                .willReturn(aResponse().withStatus(200).withFixedDelay(HANG_MS)));
        EndpointBreaker breaker = decode().breaker();
        breaker.trip("connection refused");

        clock.advance(route().settings().breakerOpenFor());
        assertTrue(route().decode().acquire(Set.of(decode().endpoint())).isEmpty(),
                "the only endpoint is excluded: the choice only starts the recovery probe");

        await("the recovery probe was cut off").atMost(Duration.ofSeconds(10))
                .until(() -> breaker.state() != EndpointBreaker.State.PROBING);
        assertEquals(EndpointBreaker.State.OPEN, breaker.state());
        assertTrue(breaker.lastFailure().contains("did not answer within"), breaker.lastFailure());
        assertTrue(route().decode().acquire(Set.of()).isEmpty(), "open for another period: no leg goes there");
    }

    private Route route() {
        return routes.named(WireMockEnginesResource.ROUTE).orElseThrow();
    }

    private PooledEndpoint decode() {
        return route().decode().member(WireMockEnginesResource.DECODE).orElseThrow();
    }
}
