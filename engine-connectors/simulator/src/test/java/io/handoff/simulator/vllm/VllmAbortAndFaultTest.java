package io.handoff.simulator.vllm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.SimHttp;
import java.io.UncheckedIOException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class VllmAbortAndFaultTest extends VllmTestSupport {

    @Test
    void closingTheConnectionDuringPrefillFreesTheBlocksAtOnce() {
        VllmConfig pc = cfg();
        pc.prefillLatencyMs = 2_000;
        VllmEngine p = start(new VllmEngine(pc));
        try (SimHttp.Raw raw = SimHttp.Raw.post(p.port(), "/v1/completions", prefillOf(completion(PROMPT, 4)))) {
            awaitStat(p, "kv_sessions_pinned_now", 1);
        }
        awaitStat(p, "freed_by_abort", 1);
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(0, p.stat("running"));
        assertEquals(1, p.stat("requests_aborted"));
    }

    @Test
    void abortAtTheInstantThePrefillFinishesIsIgnored() {
        VllmEngine p = start(new VllmEngine(cfg()));
        // the engine finishes at once but the response is held back: the close lands on a finished request
        p.faults().responseDelayMs(2_000);
        try (SimHttp.Raw raw = SimHttp.Raw.post(p.port(), "/v1/completions", prefillOf(completion(PROMPT, 4)))) {
            awaitStat(p, "kv_sessions_pinned_now", 1);
        }
        awaitStat(p, "requests_aborted", 0);
        assertEquals(1, p.stat("kv_sessions_pinned_now"), "the known gap: blocks stay until read or expiry");
        assertEquals(0, p.stat("freed_by_abort"));
        p.expireNow();
        assertEquals(1, p.stat("freed_by_timeout"));
    }

    @Test
    void decodeAbortBeforeTheReadNotifiesThePrefillWhichFrees() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmConfig dc = cfg();
        dc.maxRunning = 1;
        dc.tokenIntervalMs = 50;
        VllmEngine d = start(new VllmEngine(dc));
        ObjectNode client = completion(PROMPT, 4);
        JsonNode params = prefill(p, "/v1/completions", client);
        var busy = SimHttp.postAsync(d.baseUrl() + "/v1/completions", completion("busy", 40));
        awaitStat(d, "running", 1);
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/v1/completions", decodeOf(client, params))) {
            awaitStat(d, "waiting", 1);
        }
        awaitStat(p, "freed_by_abort", 1);
        assertEquals(0, p.stat("kv_sessions_pinned_now"));
        assertEquals(200, busy.join().status);
    }

    @Test
    void rejectedDecodeStrandsThePrefillOnLegacyButNotifiesOnLease() {
        for (VllmConfig.Mode mode : VllmConfig.Mode.values()) {
            VllmConfig c = cfg();
            c.mode = mode;
            VllmEngine p = start(new VllmEngine(c));
            VllmEngine d = start(new VllmEngine(c));
            ObjectNode client = completion(PROMPT, 4);
            JsonNode params = prefill(p, "/v1/completions", client);
            ObjectNode bad = decodeOf(client, params);
            bad.put("min_tokens", 10);
            SimHttp.Resp r = SimHttp.post(d.baseUrl() + "/v1/completions", bad);
            assertEquals(400, r.status);
            assertEquals("BadRequestError", r.json.path("error").path("type").asText());
            if (mode == VllmConfig.Mode.LEASE) {
                awaitStat(p, "freed_by_abort", 1);
            } else {
                assertEquals(1, p.stat("kv_sessions_pinned_now"));
            }
        }
    }

    @Test
    void injectedErrorStatusForTheNextRequestsOnly() {
        VllmEngine e = start(new VllmEngine(cfg()));
        SimHttp.Resp set = SimHttp.post(e.baseUrl() + "/sim/faults", "{\"error_status\":503,\"error_count\":2}");
        assertEquals(200, set.status);
        assertEquals(503, SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 2)).status);
        SimHttp.Resp second = SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 2));
        assertEquals(503, second.status);
        assertEquals(503, second.json.path("error").path("code").asInt());
        assertEquals(200, SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 2)).status);
        assertEquals(200, SimHttp.get(e.baseUrl() + "/health").status, "faults never touch discovery");
        assertEquals(400, SimHttp.post(e.baseUrl() + "/sim/faults", "{\"nope\":1}").status);
    }

    @Test
    void connectionResetFault() {
        VllmEngine e = start(new VllmEngine(cfg()));
        e.faults().resetNext(1);
        assertThrows(UncheckedIOException.class,
            () -> SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 2)));
        assertEquals(200, SimHttp.post(e.baseUrl() + "/v1/completions", completion(PROMPT, 2)).status);
        assertEquals(1, e.stat("fault_resets_injected"));
    }

    @Test
    void streamCutAfterKChunksNeverSendsDone() {
        VllmEngine e = start(new VllmEngine(cfg()));
        e.faults().cutStreams(3, 1);
        ObjectNode body = completion(PROMPT, 10).put("stream", true);
        SimHttp.Stream s = SimHttp.stream(e.baseUrl() + "/v1/completions", body);
        assertEquals(200, s.status);
        assertEquals(3, s.events.size());
        assertFalse(s.done);
        SimHttp.Stream whole = SimHttp.stream(e.baseUrl() + "/v1/completions", body);
        assertTrue(whole.done);
        assertEquals(10, whole.events.size());
        awaitStat(e, "running", 0);
    }

    @Test
    void crashLosesPinnedKvAndRestartMintsANewEngineId() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmEngine d = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 5);
        JsonNode params = prefill(p, "/v1/completions", client);
        String before = p.identity().engineId();

        p.crash(-1);
        assertFalse(p.isUp());
        assertThrows(UncheckedIOException.class, () -> SimHttp.get(p.baseUrl() + "/health"));
        SimHttp.Resp whileDown = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(500, whileDown.status, "kv_load_failure_policy=fail: generic 500");
        assertEquals("Internal server error", whileDown.json.path("error").path("message").asText());

        p.restart();
        assertNotEquals(before, p.identity().engineId());
        assertEquals(0, p.stat("kv_sessions_pinned_now"));
        assertTrue(p.stat("kv_blocks_lost_by_crash") > 0);
        assertEquals(2, p.stat("incarnation"));
        SimHttp.Resp afterRestart = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(500, afterRestart.status, "old engine id fails the NIXL handshake");
        assertEquals(2, d.stat("nixl_num_failed_transfers"));
    }

    @Test
    void recomputePolicyPrefillsLocallyWhenTheReadFails() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmConfig dc = cfg();
        dc.kvLoadFailurePolicy = "recompute";
        VllmEngine d = start(new VllmEngine(dc));
        VllmEngine agg = start(new VllmEngine(cfg()));
        ObjectNode client = completion(PROMPT, 5);
        JsonNode params = prefill(p, "/v1/completions", client);
        p.crash(-1);
        SimHttp.Resp r = SimHttp.post(d.baseUrl() + "/v1/completions", decodeOf(client, params));
        assertEquals(200, r.status);
        assertEquals(text(SimHttp.post(agg.baseUrl() + "/v1/completions", client).json), text(r.json));
    }

    @Test
    void crashOverHttpWithAutomaticRestart() {
        VllmEngine p = start(new VllmEngine(cfg()));
        String before = p.identity().instanceId();
        assertEquals(202, SimHttp.post(p.baseUrl() + "/sim/crash", "{\"restart_after_ms\":100}").status);
        Awaitility.await().until(() -> p.identity().incarnation() == 2 && p.isUp());
        assertNotEquals(before, p.identity().instanceId());
        assertEquals(200, SimHttp.get(p.baseUrl() + "/health").status);
    }

    @Test
    void discoveryEndpoints() {
        VllmConfig c = cfg();
        c.maxModelLen = 4096;
        VllmEngine e = start(new VllmEngine(c));
        JsonNode models = SimHttp.get(e.baseUrl() + "/v1/models").json;
        assertEquals("m", models.path("data").path(0).path("id").asText());
        assertEquals(4096, models.path("data").path(0).path("max_model_len").asInt());
        assertEquals("vllm", models.path("data").path(0).path("owned_by").asText());
        prefill(e, "/v1/completions", completion(PROMPT, 2));
        String metrics = SimHttp.get(e.baseUrl() + "/metrics").raw;
        assertTrue(metrics.contains("vllm:num_requests_running{"));
        assertTrue(metrics.contains("vllm:num_requests_waiting{"));
        assertTrue(metrics.contains("vllm:kv_cache_usage_perc{"));
        assertFalse(metrics.contains("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.0"),
            "pinned blocks count as used KV");
        JsonNode stats = SimHttp.get(e.baseUrl() + "/sim/stats").json;
        assertEquals("vllm", stats.path("family").asText());
        assertNotNull(stats.get("freed_by_pull"));
        assertEquals(404, SimHttp.post(e.baseUrl() + "/v1/completions",
            completion(PROMPT, 2).put("model", "other")).status);
        assertEquals(400, SimHttp.post(e.baseUrl() + "/v1/completions",
            completion(PROMPT, 2).putObject("stream_options").put("include_usage", true)).status);
    }
}
