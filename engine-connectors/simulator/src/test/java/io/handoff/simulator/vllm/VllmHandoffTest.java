package io.handoff.simulator.vllm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.Tokenizer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class VllmHandoffTest extends VllmTestSupport {

    @Test
    void disaggregatedCompletionGivesTheAggregatedTokensAndFreesOnPull() {
        VllmEngine agg = start(new VllmEngine(cfg()));
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmEngine d = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 12);

        SimHttp.Resp aggregated = SimHttp.post(agg.baseUrl() + "/v1/completions", client);
        assertEquals(200, aggregated.status);
        assertTrue(aggregated.json.get("kv_transfer_params").isNull());

        JsonNode params = prefill(p, "/v1/completions", client);
        int promptTokens = Tokenizer.encode(PROMPT).length;
        long expectedBlocks = (promptTokens + 15) / 16;
        assertTrue(params.get("do_remote_prefill").asBoolean());
        assertFalse(params.get("do_remote_decode").asBoolean());
        assertEquals(p.identity().engineId(), params.get("remote_engine_id").asText());
        assertTrue(params.get("remote_request_id").asText().startsWith("cmpl-"));
        assertEquals("localhost", params.get("remote_host").asText());
        assertEquals(p.sideChannelPort(), params.get("remote_port").asInt());
        assertEquals(expectedBlocks, params.get("remote_block_ids").size());
        assertEquals(expectedBlocks, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("kv_sessions_pinned_now"));

        SimHttp.Resp decoded = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(200, decoded.status, decoded.raw);
        assertEquals(text(aggregated.json), text(decoded.json));
        assertEquals(12, decoded.json.path("usage").path("completion_tokens").asInt());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_pull"));
        assertEquals(0, p.stat("freed_by_timeout"));
        assertEquals(0, p.stat("leaked"));
        assertEquals(0, d.stat("corrupt_kv_reads"));
    }

    @Test
    void disaggregatedChatStreamMatchesAggregatedStreamWithUsage() {
        VllmEngine agg = start(new VllmEngine(cfg()));
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmEngine d = start(new VllmEngine(cfg()));
        ObjectNode client = chat("tell me a story about simulators", 9);
        client.put("stream", true);
        client.putObject("stream_options").put("include_usage", true);

        SimHttp.Stream aggregated = SimHttp.stream(agg.baseUrl() + "/v1/chat/completions", client);
        JsonNode params = prefill(p, "/v1/chat/completions", client);
        assertTrue(params.get("remote_request_id").asText().startsWith("chatcmpl-"));
        SimHttp.Stream decoded = SimHttp.stream(d.baseUrl() + "/v1/chat/completions", decodeOf(client, params));

        assertTrue(aggregated.done);
        assertTrue(decoded.done);
        assertEquals(aggregated.text(), decoded.text());
        assertEquals("assistant", decoded.events.get(0).path("choices").path(0).path("delta").path("role").asText());
        JsonNode usage = decoded.last();
        assertEquals(0, usage.path("choices").size());
        assertEquals(9, usage.path("usage").path("completion_tokens").asInt());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
    }

    @Test
    void tokenIdPromptAndTextPromptGiveTheSameOutput() {
        VllmEngine e = start(new VllmEngine(cfg()));
        ObjectNode asText = completion(PROMPT, 6);
        ObjectNode asIds = completion(PROMPT, 6);
        var ids = asIds.putArray("prompt");
        for (int id : Tokenizer.encode(PROMPT)) {
            ids.add(id);
        }
        assertEquals(text(SimHttp.post(e.baseUrl() + "/v1/completions", asText).json),
            text(SimHttp.post(e.baseUrl() + "/v1/completions", asIds).json));
    }

    @Test
    void legacyHoldExpiresAfterTheFixedTimeoutAndALateDecodeSilentlyCorrupts() {
        VllmConfig pc = cfg();
        pc.abortRequestTimeoutMs = 150;
        VllmEngine p = start(new VllmEngine(pc));
        VllmEngine d = start(new VllmEngine(cfg()));
        VllmEngine agg = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 8);

        JsonNode params = prefill(p, "/v1/completions", client);
        assertEquals(1, p.stat("kv_sessions_pinned_now"));
        awaitStat(p, "freed_by_timeout", 1);
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("nixl_num_kv_expired_reqs"));
        assertEquals(0, p.stat("leaked"));

        SimHttp.Resp late = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(200, late.status, "vLLM answers 200 from recycled blocks");
        assertNotEquals(text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json), text(late.json));
        assertEquals(1, d.stat("corrupt_kv_reads"));
        assertEquals(1, p.stat("nixl_unrecognized_reads"));
    }

    @Test
    void advancingTheClockOrExpireNowFreesTheDefault480sHold() {
        VllmEngine p = start(new VllmEngine(cfg()));
        prefill(p, "/v1/completions", completion(PROMPT, 4));
        p.advanceClock(Duration.ofSeconds(479));
        assertEquals(1, p.stat("kv_sessions_pinned_now"));
        p.advanceClock(Duration.ofSeconds(2));
        assertEquals(0, p.stat("kv_sessions_pinned_now"));
        assertEquals(1, p.stat("freed_by_timeout"));

        prefill(p, "/v1/completions", completion(PROMPT, 4));
        SimHttp.Resp r = SimHttp.post(p.baseUrl() + "/sim/expire", "{}");
        assertEquals(200, r.status);
        assertEquals(2, r.json.get("freed_by_timeout").asInt());
        assertEquals(0, r.json.get("kv_blocks_pinned_now").asInt());
    }

    @Test
    void leaseIsRenewedByDecodeHeartbeatsWhileTheDecodeIsQueued() {
        VllmConfig pc = cfg();
        pc.mode = VllmConfig.Mode.LEASE;
        pc.kvLeaseDurationMs = 300;
        VllmEngine p = start(new VllmEngine(pc));
        VllmConfig dc = cfg();
        dc.mode = VllmConfig.Mode.LEASE;
        dc.kvLeaseDurationMs = 300;
        dc.maxRunning = 1;
        dc.tokenIntervalMs = 20;
        VllmEngine d = start(new VllmEngine(dc));
        VllmEngine agg = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 5);

        JsonNode params = prefill(p, "/v1/completions", client);
        assertEquals(1, params.get("remote_block_ids").size(), "one list per KV-cache group");
        assertTrue(params.get("remote_block_ids").get(0).isArray());
        assertEquals("pull", params.get("transfer_mode").asText());
        // occupy the decode's only slot for ~800 ms, longer than the 300 ms lease
        var busy = SimHttp.postAsync(d.baseUrl() + "/v1/completions", completion("busy", 40));
        awaitStat(d, "running", 1);
        SimHttp.Resp decoded = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(200, busy.join().status);
        assertEquals(200, decoded.status);
        assertEquals(text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json), text(decoded.json));
        assertTrue(p.stat("nixl_heartbeats_received") >= 3);
        assertEquals(1, p.stat("freed_by_pull"));
        assertEquals(0, p.stat("freed_by_timeout"));
    }

    @Test
    void leaseExpiresWithoutADecode() {
        VllmConfig pc = cfg();
        pc.mode = VllmConfig.Mode.LEASE;
        pc.kvLeaseDurationMs = 100;
        VllmEngine p = start(new VllmEngine(pc));
        prefill(p, "/v1/completions", completion(PROMPT, 5));
        awaitStat(p, "freed_by_timeout", 1);
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
    }

    @Test
    void missingKeyMakesTheDecodePrefillLocallyAndTheHoldStaysUntilExpiry() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmEngine d = start(new VllmEngine(cfg()));
        VllmEngine agg = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 7);
        ObjectNode params = (ObjectNode) prefill(p, "/v1/completions", client).deepCopy();
        params.remove("remote_request_id");

        SimHttp.Resp r = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(200, r.status);
        assertEquals(text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json), text(r.json));
        assertEquals(1, d.stat("local_prefill_fallbacks"));
        assertEquals(1, p.stat("kv_sessions_pinned_now"), "nobody pulled: the prefill keeps its blocks");
        p.expireNow();
        assertEquals(1, p.stat("freed_by_timeout"));
    }

    @Test
    void prefillStoppingOnItsFirstTokenReturnsNullParamsOnLegacyBuildsOnly() {
        VllmEngine legacy = start(new VllmEngine(cfg()));
        VllmConfig lc = cfg();
        lc.mode = VllmConfig.Mode.LEASE;
        VllmEngine lease = start(new VllmEngine(lc));
        ObjectNode client = completion("say nothing [[eos:0]]", 8);
        client.remove("ignore_eos");

        SimHttp.Resp r = SimHttp.post(legacy.baseUrl() + "/v1/completions", prefillOf(client));
        assertEquals("stop", r.json.path("choices").path(0).path("finish_reason").asText());
        assertTrue(r.json.get("kv_transfer_params").isNull());
        assertEquals(0, legacy.stat("kv_sessions_pinned_now"));
        assertEquals(1, legacy.stat("freed_by_finish"));

        SimHttp.Resp r2 = SimHttp.post(lease.baseUrl() + "/v1/completions", prefillOf(client));
        assertNotNull(r2.json.get("kv_transfer_params"));
        assertFalse(r2.json.get("kv_transfer_params").isNull());
        assertEquals(1, lease.stat("kv_sessions_pinned_now"));
    }

    @Test
    void requestWithoutParamsAnswersNullParamsAndPinsNothing() {
        VllmEngine e = start(new VllmEngine(cfg()));
        SimHttp.Resp r = SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 3));
        assertTrue(r.json.get("kv_transfer_params").isNull());
        assertEquals(0, e.stat("kv_sessions_pinned_now"));
        assertEquals(0, e.stat("running"));
        assertEquals(e.stat("kv_blocks_total"), e.stat("kv_blocks_free"));
    }
}
