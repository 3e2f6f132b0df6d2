package io.handoff.simulator.trtllm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.SimTestBase;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Client cancels counted by phase on trtllm-serve, whose only cancel is a closed connection: a context-only request
 * during its prefill, a generation-only one before its first token (receiving the KV) or mid-stream. The phase is
 * held still by a long prefill, transfer or token interval.
 */
class TrtllmCancelPhaseTest extends SimTestBase {
    private static final String PROMPT = "NVIDIA is a great company because";
    private static final AtomicLong IDS = new AtomicLong(1_420_443_029_765_120_001L);

    private static TrtllmConfig cfg(Role role) {
        TrtllmConfig c = new TrtllmConfig();
        c.role = role;
        c.model = "m";
        return c;
    }

    private static ObjectNode completion() {
        return Http.obj().put("model", "m").put("prompt", PROMPT).put("max_tokens", 8).put("ignore_eos", true);
    }

    private static ObjectNode ctxRequest(long id) {
        ObjectNode c = completion().put("stream", false);
        c.putObject("disaggregated_params").put("request_type", "context_only").put("disagg_request_id", id)
            .put("schedule_style", 0);
        return c;
    }

    /** The context-first generation request the orchestrator makes of a context's answer. */
    private static ObjectNode genRequest(JsonNode ctxResponse, long id) {
        ObjectNode g = completion().put("stream", true);
        ObjectNode dp = ctxResponse.path("choices").get(0).get("disaggregated_params").deepCopy();
        dp.put("request_type", "generation_only").put("schedule_style", 0).put("disagg_request_id", id);
        g.set("disaggregated_params", dp);
        g.set("prompt", ctxResponse.get("prompt_token_ids"));
        return g;
    }

    private static JsonNode context(TrtllmEngine ctx, long id) {
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(id));
        assertEquals(200, c.status, c.raw);
        return c.json;
    }

    @Test
    void aContextClosedDuringItsPrefillIsCancelledDuringPrefill() {
        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.prefillLatencyMs = 60_000;
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        try (SimHttp.Raw raw = SimHttp.Raw.post(ctx.port(), "/v1/completions", ctxRequest(IDS.incrementAndGet()))) {
            awaitStat(ctx, "kv_sessions_pinned_now", 1);
        }
        awaitCancels(ctx, 1, 0, 0);
        awaitStat(ctx, "freed_by_abort", 1);
    }

    @Test
    void aGenerationClosedWhileReceivingTheKvIsCancelledBeforeItsFirstToken() {
        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.transferLatencyMs = 60_000;
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        TrtllmEngine gen = start(new TrtllmEngine(cfg(Role.DECODE)));
        long id = IDS.incrementAndGet();
        JsonNode c = context(ctx, id);
        try (SimHttp.Raw raw = SimHttp.Raw.post(gen.port(), "/v1/completions", genRequest(c, id))) {
            awaitStat(gen, "kv_sessions_pinned_now", 1);
        }
        awaitCancels(gen, 0, 1, 0);
        awaitCancels(ctx, 0, 0, 0);
    }

    @Test
    void aGenerationClosedAfterItsFirstTokenIsCancelledMidStream() {
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        TrtllmConfig gc = cfg(Role.DECODE);
        gc.tokenIntervalMs = 60_000;
        TrtllmEngine gen = start(new TrtllmEngine(gc));
        long id = IDS.incrementAndGet();
        JsonNode c = context(ctx, id);
        try (SimHttp.Raw raw = SimHttp.Raw.post(gen.port(), "/v1/completions", genRequest(c, id))) {
            raw.readUntil("\"text\"");
        }
        awaitCancels(gen, 0, 0, 1);
        awaitCancels(ctx, 0, 0, 0);
    }

    @Test
    void anAggregatedRequestClosedIsNoHandoffLeg() {
        TrtllmConfig ac = cfg(Role.BOTH);
        ac.prefillLatencyMs = 60_000;
        TrtllmEngine agg = start(new TrtllmEngine(ac));
        try (SimHttp.Raw raw = SimHttp.Raw.post(agg.port(), "/v1/completions", completion())) {
            awaitStat(agg, "running", 1);
        }
        awaitStat(agg, "requests_aborted", 1);
        awaitCancels(agg, 0, 0, 0);
    }
}
