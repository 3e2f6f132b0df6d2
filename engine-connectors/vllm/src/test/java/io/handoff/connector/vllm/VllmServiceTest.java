package io.handoff.connector.vllm;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The family's declarations, its option checks and its discovery. */
class VllmServiceTest {

    private final ConnectorService service = WireMockRig.service();

    private ConnectorCapabilities initialise(Map<String, String> options) {
        return service.initialise(WireMockRig.config(options, Endpoint.of("p", "http://p:1"),
                Endpoint.of("d", "http://d:1")));
    }

    @Test
    void fixedHoldBuilds() {
        ConnectorCapabilities c = initialise(Map.of("hold-mode", "fixed"));
        assertEquals(Set.of(ScheduleStyle.CONTEXT_FIRST), c.nativeStyles());
        assertEquals(Duration.ofSeconds(480), c.engineHold());
        assertFalse(c.decodeRenewsHold());
        assertFalse(c.earlyRelease());
        assertEquals(AbortMode.CLOSE_CONNECTION, c.abortMode());
        assertTrue(c.localPrefill());
        assertEquals(Set.of(InputKind.TEXT, InputKind.TOKEN_IDS, InputKind.CHAT_MESSAGES), c.inputs());
        assertTrue(c.decodeRetryElsewhere());
        assertEquals(1, c.maxOutputs());
        assertEquals(Duration.ofSeconds(120), initialise(Map.of("hold-mode", "fixed", "hold-seconds", "120"))
                .engineHold());
    }

    @Test
    void leaseBuilds() {
        ConnectorCapabilities c = initialise(Map.of("hold-mode", "lease"));
        assertEquals(Duration.ofSeconds(30), c.engineHold());
        assertTrue(c.decodeRenewsHold());
    }

    @Test
    void optionsThatCannotBeHonouredStopTheRoute() {
        for (Map<String, String> bad : List.of(Map.<String, String>of(), Map.of("hold-mode", "forever"),
                Map.of("hold-mode", "lease", "hold-seconds", "480"), Map.of("hold-mode", "fixed", "colour", "red"),
                Map.of("hold-mode", "fixed", "hold-seconds", "0"), Map.of("hold-mode", "fixed", "hold-seconds", "x"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> initialise(bad),
                    bad.toString());
            assertTrue(e.getMessage().contains("route-a"), e.getMessage());
        }
    }

    @Test
    void probeReadsHealthModelsAndLoad() {
        try (WireMockRig rig = WireMockRig.fixedHold()) {
            rig.prefillEngine.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(200)));
            rig.prefillEngine.stubFor(get(urlEqualTo("/v1/models")).willReturn(aResponse().withStatus(200).withBody(
                    "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"owned_by\":\"vllm\","
                            + "\"max_model_len\":8192}]}")));
            rig.prefillEngine.stubFor(get(urlEqualTo("/metrics")).willReturn(aResponse().withStatus(200).withBody("""
                    # TYPE vllm:num_requests_running gauge
                    vllm:num_requests_running{engine="0",model_name="m"} 3.0
                    vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
                    vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
                    """)));
            EndpointStatus s = rig.connector.probe(rig.prefill).await().atMost(VllmLegsTest.WAIT);
            assertTrue(s.healthy());
            assertEquals(Optional.empty(), s.role());
            assertEquals(List.of("m"), s.models());
            assertEquals(Optional.of(8192), s.maxContextLength());
            assertEquals(Map.of("running_requests", 3.0, "waiting_requests", 1.0, "kv_usage", 0.5), s.load());

            rig.decodeEngine.stubFor(get(urlEqualTo("/health")).willReturn(aResponse().withStatus(503)));
            EndpointStatus down = rig.connector.probe(rig.decode).await().atMost(VllmLegsTest.WAIT);
            assertFalse(down.healthy());
            assertTrue(down.detail().contains("503"), down.detail());
        }
    }
}
