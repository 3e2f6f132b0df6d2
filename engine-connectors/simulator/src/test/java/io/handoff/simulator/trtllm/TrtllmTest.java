package io.handoff.simulator.trtllm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.SimTestBase;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class TrtllmTest extends SimTestBase {
    private static final String PROMPT = "NVIDIA is a great company because";
    private static final AtomicLong IDS = new AtomicLong(1_320_443_029_765_120_001L);

    private static TrtllmConfig cfg(Role role) {
        TrtllmConfig c = new TrtllmConfig();
        c.role = role;
        c.model = "m";
        return c;
    }

    private static ObjectNode completion(int maxTokens) {
        return Http.obj().put("model", "m").put("prompt", PROMPT).put("max_tokens", maxTokens).put("ignore_eos", true);
    }

    private static ObjectNode ctxRequest(ObjectNode client, long id, int style) {
        ObjectNode c = client.deepCopy().put("stream", false);
        c.remove("stream_options");
        c.putObject("disaggregated_params").put("request_type", "context_only").put("disagg_request_id", id)
            .put("schedule_style", style);
        return c;
    }

    /** What the orchestrator's _get_gen_request does with a context response. */
    private static ObjectNode genRequest(ObjectNode client, JsonNode ctxResponse, long id) {
        ObjectNode g = client.deepCopy();
        ObjectNode dp = ctxResponse.path("choices").get(0).get("disaggregated_params").deepCopy();
        dp.put("request_type", "generation_only").put("schedule_style", 0).put("disagg_request_id", id);
        dp.set("ctx_usage", ctxResponse.get("usage"));
        g.set("disaggregated_params", dp);
        g.set("prompt", ctxResponse.get("prompt_token_ids"));
        return g;
    }

    private static String text(JsonNode r) {
        return r.path("choices").path(0).path("text").asText();
    }

    @Test
    void contextFirstHandoffMatchesAggregatedAndFreesOnPull() {
        TrtllmEngine agg = start(new TrtllmEngine(cfg(Role.BOTH)));
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        TrtllmEngine gen = start(new TrtllmEngine(cfg(Role.DECODE)));
        long id = IDS.incrementAndGet();
        ObjectNode client = completion(10);

        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(client, id, 0));
        assertEquals(200, c.status, c.raw);
        assertEquals(1, c.json.path("choices").size());
        JsonNode choice = c.json.path("choices").get(0);
        assertEquals("length", choice.path("finish_reason").asText());
        JsonNode dp = choice.path("disaggregated_params");
        assertEquals("context_only", dp.path("request_type").asText());
        assertEquals(id, dp.path("ctx_request_id").asLong());
        assertEquals(id, dp.path("disagg_request_id").asLong());
        assertEquals(1, dp.path("first_gen_tokens").size());
        assertFalse(dp.path("encoded_opaque_state").asText().isEmpty());
        assertEquals(1, c.json.path("usage").path("completion_tokens").asInt());
        assertTrue(c.json.path("prompt_token_ids").size() > 0);
        assertEquals(1, ctx.stat("kv_sessions_pinned_now"));

        ObjectNode g = genRequest(client, c.json, id).put("stream", true);
        g.putObject("stream_options").put("include_usage", true);
        SimHttp.Stream s = SimHttp.stream(gen.baseUrl() + "/v1/completions", g);
        assertTrue(s.done);
        assertEquals(text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json), s.text());
        assertTrue(s.events.get(0).has("usage"), "TRT-LLM chunks carry nulls");
        assertEquals(10, s.last().path("usage").path("completion_tokens").asInt());
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));
        assertEquals(1, ctx.stat("freed_by_pull"));
        assertEquals(1, gen.stat("transfers_received"));
    }

    @Test
    void chatContextFirstWithPromptTokenIds() {
        TrtllmEngine agg = start(new TrtllmEngine(cfg(Role.BOTH)));
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        TrtllmEngine gen = start(new TrtllmEngine(cfg(Role.DECODE)));
        long id = IDS.incrementAndGet();
        ObjectNode client = Http.obj().put("model", "m").put("max_tokens", 6).put("ignore_eos", true);
        client.putArray("messages").addObject().put("role", "user").put("content", PROMPT);
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/chat/completions", ctxRequest(client, id, 0));
        ObjectNode g = client.deepCopy();
        ObjectNode dp = c.json.path("choices").get(0).get("disaggregated_params").deepCopy();
        dp.put("request_type", "generation_only");
        g.set("disaggregated_params", dp);
        g.set("prompt_token_ids", c.json.get("prompt_token_ids"));
        SimHttp.Resp r = SimHttp.post(gen.baseUrl() + "/v1/chat/completions", g);
        assertEquals(200, r.status, r.raw);
        assertEquals(SimHttp.post(agg.baseUrl() + "/v1/chat/completions", client).json.path("choices").path(0)
            .path("message").path("content").asText(), r.json.path("choices").path(0).path("message")
            .path("content").asText());
    }

    @Test
    void parkedContextIsOnlyFreedByKvTransferTimeout() {
        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.kvTransferTimeoutMs = 150;
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        TrtllmConfig gc = cfg(Role.DECODE);
        gc.kvTransferTimeoutMs = 200;
        TrtllmEngine gen = start(new TrtllmEngine(gc));
        long id = IDS.incrementAndGet();
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0));
        awaitStat(ctx, "freed_by_timeout", 1);
        assertEquals(1, ctx.stat("kv_transfer_timeouts"));
        assertEquals(0, ctx.stat("kv_blocks_pinned_now"));

        SimHttp.Resp late = SimHttp.post(gen.baseUrl() + "/v1/completions", genRequest(completion(4), c.json, id));
        assertEquals(500, late.status, "the generation waits out its own timeout");
        assertTrue(late.json.path("message").asText().contains("KV cache transfer timeout"));
        assertEquals(1, gen.stat("freed_by_timeout"));
    }

    @Test
    void defaultSixtySecondHoldAndAnEosContextStaysParked() {
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        ObjectNode client = completion(4).put("prompt", "stop now [[eos:0]]");
        client.remove("ignore_eos");
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(client, IDS.incrementAndGet(), 0));
        assertEquals("stop", c.json.path("choices").path(0).path("finish_reason").asText(),
            "an already-finished context answer");
        assertEquals(1, ctx.stat("kv_sessions_pinned_now"), "no release API: parked anyway");
        ctx.advanceClock(Duration.ofSeconds(59));
        assertEquals(1, ctx.stat("kv_sessions_pinned_now"));
        ctx.advanceClock(Duration.ofSeconds(2));
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));
        assertEquals(1, ctx.stat("freed_by_timeout"));
    }

    @Test
    void generationFirstBothArrivalOrders() {
        TrtllmEngine agg = start(new TrtllmEngine(cfg(Role.BOTH)));
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        TrtllmEngine gen = start(new TrtllmEngine(cfg(Role.DECODE)));
        ObjectNode client = completion(8);
        String expected = text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json);
        JsonNode info = SimHttp.get(ctx.baseUrl() + "/server_info").json.path("disaggregated_params");
        String endpoint = info.path("ctx_info_endpoint").get(0).asText();
        assertEquals(ctx.ctxInfoEndpoint(), endpoint);

        long id = IDS.incrementAndGet();
        ObjectNode g = client.deepCopy().put("stream", true);
        g.putObject("disaggregated_params").put("request_type", "generation_only").put("ctx_request_id", id)
            .put("disagg_request_id", id).put("schedule_style", 1).put("ctx_dp_rank", 0)
            .put("ctx_info_endpoint", endpoint);
        CompletableFuture<SimHttp.Stream> gs = CompletableFuture.supplyAsync(
            () -> SimHttp.stream(gen.baseUrl() + "/v1/completions", g));
        awaitStat(ctx, "receivers_waiting_for_context", 1);
        assertFalse(gs.isDone(), "the generation waits for its context");
        assertEquals(1, gen.stat("kv_sessions_pinned_now"));
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(client, id, 1));
        assertEquals(200, c.status);
        assertEquals(1, c.json.path("choices").path(0).path("disaggregated_params").path("schedule_style").asInt());
        assertEquals(expected, gs.join().text());

        long id2 = IDS.incrementAndGet();
        var c2 = SimHttp.postAsync(ctx.baseUrl() + "/v1/completions", ctxRequest(client, id2, 1));
        awaitStat(ctx, "contexts_waiting_for_generation", 1);
        assertFalse(c2.isDone(), "the context waits for the generation's receiver");
        ObjectNode g2 = g.deepCopy().put("stream", false);
        ((ObjectNode) g2.get("disaggregated_params")).put("ctx_request_id", id2).put("disagg_request_id", id2);
        SimHttp.Resp r2 = SimHttp.post(gen.baseUrl() + "/v1/completions", g2);
        assertEquals(expected, text(r2.json));
        assertEquals(200, c2.join().status);
        assertEquals(2, ctx.stat("freed_by_pull"));
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));
        assertEquals(0, gen.stat("kv_sessions_pinned_now"));
        assertEquals(2, gen.stat("auth_unverified"), "no key configured: accepted with a warning");
        assertEquals(0, ctx.stat("auth_unverified"));
    }

    @Test
    void authHeaderIsCheckedWhenAKeyIsConfigured() {
        assertEquals("sha256=ef5ca587029a233732bf34254c055b5100920065a38a678e7f08fed22a00da82",
            DisaggAuth.sign("secret", Http.obj().put("encoded_opaque_state", "AAECAwQF")));
        ObjectNode list = Http.obj();
        list.putArray("ctx_info_endpoint").add("tcp://10.0.0.5:38671");
        assertEquals("sha256=b313cfe2b9e699f774722890fc11b0aaa961fb576c70d909d8f59a39a6ff5b88",
            DisaggAuth.sign("secret", list));

        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.authKey = "secret";
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        TrtllmConfig gc = cfg(Role.DECODE);
        gc.authKey = "secret";
        TrtllmEngine gen = start(new TrtllmEngine(gc));
        long id = IDS.incrementAndGet();
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0));
        assertEquals(200, c.status, "a context request carries no protected field");
        ObjectNode g = genRequest(completion(4), c.json, id);

        SimHttp.Resp none = SimHttp.post(gen.baseUrl() + "/v1/completions", g);
        assertEquals(400, none.status);
        assertEquals("Invalid internal disaggregated request authentication", none.json.path("message").asText());
        SimHttp.Resp wrong = SimHttp.post(gen.baseUrl() + "/v1/completions", g,
            Map.of(DisaggAuth.HEADER, DisaggAuth.sign("other", g.get("disaggregated_params"))));
        assertEquals(400, wrong.status);
        assertEquals(2, gen.stat("auth_rejected"));
        assertEquals(1, ctx.stat("kv_sessions_pinned_now"), "rejected generations leave the context parked");

        SimHttp.Resp ok = SimHttp.post(gen.baseUrl() + "/v1/completions", g,
            Map.of(DisaggAuth.HEADER, DisaggAuth.sign("secret", g.get("disaggregated_params"))));
        assertEquals(200, ok.status, ok.raw);
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));
    }

    @Test
    void disaggIdsMustBeGlobalAndUniqueInFlight() {
        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.prefillLatencyMs = 1_000;
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        SimHttp.Resp local = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), 12345, 0));
        assertEquals(400, local.status);
        long id = IDS.incrementAndGet();
        var first = SimHttp.postAsync(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0));
        awaitStat(ctx, "running", 1);
        assertEquals(400, SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0)).status);
        assertEquals(200, first.join().status);
        assertEquals(400, SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0)).status,
            "the id is still parked on this worker");
    }

    @Test
    void closingTheConnectionAbortsAPendingContextOrGeneration() {
        TrtllmConfig cc = cfg(Role.PREFILL);
        cc.prefillLatencyMs = 5_000;
        TrtllmEngine ctx = start(new TrtllmEngine(cc));
        TrtllmEngine gen = start(new TrtllmEngine(cfg(Role.DECODE)));
        try (SimHttp.Raw raw = SimHttp.Raw.post(ctx.port(), "/v1/completions",
            ctxRequest(completion(4), IDS.incrementAndGet(), 0))) {
            awaitStat(ctx, "kv_sessions_pinned_now", 1);
        }
        awaitStat(ctx, "freed_by_abort", 1);
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));

        long id = IDS.incrementAndGet();
        ObjectNode g = completion(4);
        g.putObject("disaggregated_params").put("request_type", "generation_only").put("ctx_request_id", id)
            .put("disagg_request_id", id).put("schedule_style", 1).put("ctx_info_endpoint", ctx.ctxInfoEndpoint());
        try (SimHttp.Raw raw = SimHttp.Raw.post(gen.port(), "/v1/completions", g)) {
            awaitStat(ctx, "receivers_waiting_for_context", 1);
        }
        awaitStat(gen, "freed_by_abort", 1);
        awaitStat(ctx, "receivers_waiting_for_context", 0);
    }

    @Test
    void restartedContextIsUnknownToAGenerationWithOldOpaqueState() {
        TrtllmEngine ctx = start(new TrtllmEngine(cfg(Role.PREFILL)));
        TrtllmConfig gc = cfg(Role.DECODE);
        gc.kvTransferTimeoutMs = 200;
        TrtllmEngine gen = start(new TrtllmEngine(gc));
        long id = IDS.incrementAndGet();
        SimHttp.Resp c = SimHttp.post(ctx.baseUrl() + "/v1/completions", ctxRequest(completion(4), id, 0));
        String before = ctx.identity().instanceId();
        ctx.crash(0);
        Awaitility.await().until(() -> ctx.isUp() && ctx.identity().incarnation() == 2);
        assertNotEquals(before, ctx.identity().instanceId());
        assertEquals(0, ctx.stat("kv_sessions_pinned_now"));
        SimHttp.Resp r = SimHttp.post(gen.baseUrl() + "/v1/completions", genRequest(completion(4), c.json, id));
        assertEquals(500, r.status);
        assertEquals(1, gen.stat("kv_transfer_timeouts"));
    }

    @Test
    void discoveryAndFaults() {
        TrtllmEngine e = start(new TrtllmEngine(cfg(Role.PREFILL)));
        assertEquals("tensorrt_llm", SimHttp.get(e.baseUrl() + "/v1/models").json.path("data").path(0)
            .path("owned_by").asText());
        assertTrue(SimHttp.get(e.baseUrl() + "/prometheus/metrics").raw.contains("trtllm_kv_transfer_timeouts_total"));
        assertTrue(SimHttp.get(e.baseUrl() + "/metrics").json.path(0).has("kvCacheStats"));
        SimHttp.post(e.baseUrl() + "/sim/faults", "{\"error_status\":429}");
        SimHttp.Resp r = SimHttp.post(e.baseUrl() + "/v1/completions", completion(2));
        assertEquals(429, r.status);
        assertEquals("error", r.json.path("object").asText());
        SimHttp.post(e.baseUrl() + "/sim/faults", "{\"health_status\":503}");
        assertEquals(503, SimHttp.get(e.baseUrl() + "/health").status);
    }
}
