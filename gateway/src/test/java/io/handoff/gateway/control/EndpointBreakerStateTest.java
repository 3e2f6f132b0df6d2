package io.handoff.gateway.control;

import io.grpc.Status;
import io.handoff.gateway.routing.EndpointBreaker;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.GenerateCall;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.SimFleetTestResource;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.simulator.Family;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@code handoff_endpoint_breaker_state}: one series per breaker state of each endpoint, 1 for the state it is in,
 * over real probes of a simulated engine that crashes and comes back. A breaker opened by failed probes shows
 * {@code open}; the Generate it leaves without an endpoint is counted as {@code breakers-open}; once the open period
 * has passed on the test clock, a healthy probe closes it and the gauge says {@code closed} again.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class EndpointBreakerStateTest extends ControlPlaneTest {

    private static final int SAMPLES_AT_MOST = 10;

    @Inject
    FleetSampler sampler;

    @Inject
    MutableClock clock;

    @Inject
    RouteRegistry routes;

    @Inject
    MeterRegistry registry;

    @Test
    void aBreakerOpenedByFailuresShowsOpenThenClosedOnceAProbeFindsItHealthy() {
        sampler.sampleNow().await().indefinitely();
        assertEquals(Map.of("closed", 1.0, "open", 0.0, "probing", 0.0), breakerState());

        SimEngine decode = SimFleetTestResource.engine(Family.TRTLLM, Role.DECODE);
        double refused = refused("breakers-open");
        decode.crash(-1);
        try {
            // each failed probe is one failure against the breaker: it opens at the route's threshold
            for (int i = 0; i < SAMPLES_AT_MOST && breaker().state() != EndpointBreaker.State.OPEN; i++) {
                sampler.sampleNow().await().indefinitely();
            }
            assertEquals(EndpointBreaker.State.OPEN, breaker().state(), breaker().lastFailure());
            assertEquals(Map.of("closed", 0.0, "open", 1.0, "probing", 0.0), breakerState());
            assertEquals(0.0, gauge("handoff.endpoint.up").value(), "the up gauge agrees");

            GenerateCall call = GenerateCall.start(client, ControlPlaneProfile.TEAM_A_KEY, "m-trtllm", 4);
            assertEquals(Status.Code.UNAVAILABLE, call.awaitEnd().getCode());
            assertEquals(ErrorCode.ERROR_CODE_INTERNAL.name(), call.errorCode());
            assertEquals(refused + 1, refused("breakers-open"), "counted as breakers open, not as an emptied pool");
        } finally {
            decode.restart();
        }

        // before its open period has passed, the breaker stays open whatever the engine answers
        sampler.sampleNow().await().indefinitely();
        assertEquals(1.0, breakerState().get("open"));
        clock.advance(routes.named("trtllm").orElseThrow().settings().breakerOpenFor());
        sampler.sampleNow().await().indefinitely();
        assertEquals(EndpointBreaker.State.CLOSED, breaker().state(), breaker().lastFailure());
        assertEquals(Map.of("closed", 1.0, "open", 0.0, "probing", 0.0), breakerState());
        assertEquals(1.0, gauge("handoff.endpoint.up").value());
    }

    private EndpointBreaker breaker() {
        return routes.named("trtllm").orElseThrow().decode().member("d-0").orElseThrow().breaker();
    }

    /** The value of each state's series of trtllm's decode endpoint d-0, by the {@code state} label. */
    private Map<String, Double> breakerState() {
        List<Gauge> gauges = List.copyOf(registry.find("handoff.endpoint.breaker.state")
                .tags("route", "trtllm", "pool", "decode", "endpoint", "d-0").gauges());
        assertEquals(3, gauges.size(), "one series per state");
        return gauges.stream().collect(Collectors.toMap(g -> g.getId().getTag("state"), Gauge::value));
    }

    private Gauge gauge(String name) {
        Gauge gauge = registry.find(name).tags("route", "trtllm", "pool", "decode", "endpoint", "d-0").gauge();
        assertNotNull(gauge, name);
        return gauge;
    }

    private double refused(String reason) {
        Counter counter = registry.find("handoff.generate.refused").tag("route", "trtllm")
                .tag("code", ErrorCode.ERROR_CODE_INTERNAL.name()).tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }
}
