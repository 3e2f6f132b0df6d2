package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.SessionPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The policies as configuration: names parsed with a clear refusal, prefix-affinity refused on a decode pool. */
class EndpointPolicyConfigTest {

    private static final SessionPolicy DEPLOYMENT = new SessionPolicy(Duration.ofSeconds(30),
            Duration.ofMinutes(10), Duration.ofMinutes(10), 1000, ScheduleStyle.CONTEXT_FIRST,
            EnumSet.allOf(ScheduleStyle.class), true, 256, 65536);
    private static final RouteFactory FACTORY = new RouteFactory(RouteRegistry.discoverFamilies(), DEPLOYMENT,
            ProbesAsTheyAre.RUNNER);

    private static RouteSettings.Builder vllm() {
        return RouteSettings.builder("r1", "m", "vllm").engineModel("sim-model")
                .prefill(List.of(Endpoint.of("prefill-0", "http://127.0.0.1:1")))
                .decode(List.of(Endpoint.of("decode-0", "http://127.0.0.1:2")))
                .options(Map.of("hold-mode", "fixed", "hold-seconds", "60"));
    }

    @Test
    void everyPolicyParsesByItsConfigName() {
        for (EndpointPolicy p : EndpointPolicy.values()) {
            assertEquals(p, EndpointPolicy.parse("r1", "prefill-policy", p.configName()));
        }
        String message = assertThrows(IllegalArgumentException.class,
                () -> EndpointPolicy.parse("r1", "decode-policy", "random")).getMessage();
        assertEquals("route r1: decode-policy 'random' is not one of least-outstanding, power-of-two, "
                + "prefix-affinity", message);
    }

    @Test
    void prefixAffinityIsForPrefillPoolsAndItsBoundMustBeAboveOne() {
        FACTORY.negotiate(vllm().prefillPolicy(EndpointPolicy.PREFIX_AFFINITY)
                .decodePolicy(EndpointPolicy.POWER_OF_TWO).build());
        String decode = assertThrows(IllegalArgumentException.class, () -> FACTORY.negotiate(vllm()
                .decodePolicy(EndpointPolicy.PREFIX_AFFINITY).build())).getMessage();
        assertTrue(decode.startsWith("route r1: decode-policy: prefix-affinity is for prefill pools"), decode);
        String bound = assertThrows(IllegalArgumentException.class, () -> FACTORY.negotiate(vllm()
                .prefillPolicy(EndpointPolicy.PREFIX_AFFINITY).prefixLoadBound(1.0).build())).getMessage();
        assertTrue(bound.startsWith("route r1: prefix-affinity.load-bound: 1.0 must be a number above 1"), bound);
    }
}
