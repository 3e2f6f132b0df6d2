package io.handoff.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each inference request's W3C trace context is kept, so a test can tell which trace an engine was called in. */
class TraceContextTest extends SimTestBase {

    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    private static final String BODY = "{\"model\":\"sim-model\",\"prompt\":\"trace me\",\"max_tokens\":2}";

    @Test
    void anInferenceRequestsTraceparentIsKeptInOrderAndOneWithoutHasAnEmptyOne() {
        VllmEngine e = start(new VllmEngine(new VllmConfig()));
        assertEquals(200, SimHttp.post(e.baseUrl() + "/v1/completions", BODY,
            Map.of(SimEngine.TRACEPARENT, TRACEPARENT)).status);
        assertEquals(200, SimHttp.post(e.baseUrl() + "/v1/completions", BODY).status);
        // admin and health calls are not inference
        SimHttp.get(e.baseUrl() + "/sim/stats");
        assertEquals(List.of(TRACEPARENT, ""), e.receivedTraceParents());
    }

    @Test
    void onlyTheLatestRequestsAreKept() {
        VllmEngine e = start(new VllmEngine(new VllmConfig()));
        int sent = SimEngine.TRACE_PARENTS_KEPT + 3;
        for (int i = 0; i < sent; i++) {
            String parent = String.format("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", i + 1);
            assertEquals(200, SimHttp.post(e.baseUrl() + "/v1/completions", BODY,
                Map.of(SimEngine.TRACEPARENT, parent)).status);
        }
        List<String> kept = e.receivedTraceParents();
        assertEquals(SimEngine.TRACE_PARENTS_KEPT, kept.size());
        assertEquals(String.format("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", 4), kept.get(0));
        assertEquals(String.format("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", sent), kept.get(kept.size() - 1));
    }
}
