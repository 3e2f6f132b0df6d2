package io.handoff.connector.trtllm;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.ScheduleStyle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Route options and the capabilities they declare. */
class TrtllmServiceTest {

    private static final Endpoint P = Endpoint.of("ctx-0", "http://127.0.0.1:1");
    private static final Endpoint D = Endpoint.of("gen-0", "http://127.0.0.1:2");

    private static ConnectorCapabilities init(Map<String, String> options) {
        return WireMockRig.service().initialise(WireMockRig.config(options, P, D));
    }

    @Test
    void defaults() {
        ConnectorCapabilities c = init(Map.of());
        assertEquals(Set.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST), c.nativeStyles());
        assertEquals(Duration.ofSeconds(60), c.engineHold());
        assertFalse(c.decodeRenewsHold());
        assertFalse(c.earlyRelease());
        assertEquals(AbortMode.CLOSE_CONNECTION, c.abortMode());
        assertTrue(c.localPrefill());
        assertTrue(c.decodeRetryElsewhere());
        assertEquals(1, c.maxOutputs());
        assertEquals(TrtllmFields.CARRIED, c.requestFields());
    }

    @Test
    void optionsShapeTheCapabilities() {
        ConnectorCapabilities c = init(Map.of("schedule-styles", "generation-first", "kv-transfer-timeout-ms", "15000"));
        assertEquals(Set.of(ScheduleStyle.GENERATION_FIRST), c.nativeStyles());
        assertEquals(Duration.ofSeconds(15), c.engineHold());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "kv-transfer-timeout-ms|0|kv-transfer-timeout-ms",
        "kv-transfer-timeout-ms|-1|kv-transfer-timeout-ms",
        "kv-transfer-timeout-ms|null|kv-transfer-timeout-ms",
        "schedule-styles|concurrent|concurrent",
        "schedule-styles|decode-first|decode-first",
        "node-id|256|node-id",
        "decode-margin-ms|60000|decode-margin-ms",
        "hold-mode|fixed|unknown trtllm option"})
    void badOptionsFailTheRoute(String name, String value, String mentioned) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> init(Map.of(name, value)));
        assertTrue(e.getMessage().contains(mentioned), e.getMessage());
    }

    @Test
    void theKeyIsNeverPrinted() {
        TrtllmSettings s = TrtllmSettings.from(WireMockRig.config(Map.of("auth-key", "s3cr3t"), P, D));
        assertFalse(s.toString().contains("s3cr3t"));
    }
}
