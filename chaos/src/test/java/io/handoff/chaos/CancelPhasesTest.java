package io.handoff.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The engines' cancels by phase are summed over the fleet and per family; a run in which a phase got no cancel
 * proved nothing of it and fails.
 */
class CancelPhasesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ObjectNode stats(String family, long prefill, long beforeFirst, long midStream) {
        return JSON.createObjectNode().put("family", family).put("cancelled_during_prefill", prefill)
                .put("cancelled_before_first_token", beforeFirst).put("cancelled_mid_stream", midStream);
    }

    private static Map<String, JsonNode> fleet(ObjectNode... engines) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        for (int i = 0; i < engines.length; i++) {
            m.put("engine-" + i, engines[i]);
        }
        return m;
    }

    @Test
    void everyPhaseReachedHoldsAndIsSummedOverTheFleetAndPerFamily() {
        Map<String, JsonNode> f = fleet(stats("vllm", 2, 0, 0), stats("vllm", 0, 3, 4), stats("sglang", 1, 0, 0),
                stats("sglang", 0, 0, 5));
        CancelPhases.Count c = CancelPhases.count(f);
        assertEquals(List.of(3L, 3L, 9L), List.copyOf(c.total().values()));
        assertEquals(List.of(2L, 3L, 4L), List.copyOf(c.byFamily().get("vllm").values()));
        assertEquals(List.of(1L, 0L, 5L), List.copyOf(c.byFamily().get("sglang").values()));
        Verdict v = new Verdict();
        CancelPhases.check(f, v);
        assertTrue(v.holds(), v.table());
    }

    @Test
    void aPhaseNoCancelReachedFailsTheRun() {
        Verdict v = new Verdict();
        CancelPhases.check(fleet(stats("trtllm", 0, 2, 0), stats("trtllm", 0, 0, 0)), v);
        assertFalse(v.holds(), v.table());
        assertEquals(List.of("  legs cancelled during the prefill: expected >= 1, was 0",
                "  legs cancelled mid-stream: expected >= 1, was 0"), v.broken());
    }
}
