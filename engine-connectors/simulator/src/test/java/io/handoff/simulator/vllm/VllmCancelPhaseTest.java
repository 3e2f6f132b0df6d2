package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.SimHttp;
import org.junit.jupiter.api.Test;

/**
 * Client cancels counted by phase: vLLM's only cancel is its client closing the connection (it has no abort API); a
 * prefill leg is cancelled during its prefill, a decode leg before its first token (queued, or reading the KV) or
 * mid-stream. The phase is held still by a long prefill or token interval, never by sleeping.
 */
class VllmCancelPhaseTest extends VllmTestSupport {

    @Test
    void aPrefillLegClosedDuringItsPrefillIsCancelledDuringPrefill() {
        VllmConfig pc = cfg();
        pc.prefillLatencyMs = 60_000;
        VllmEngine p = start(new VllmEngine(pc));
        try (SimHttp.Raw raw = SimHttp.Raw.post(p.port(), "/v1/completions", prefillOf(completion(PROMPT, 4)))) {
            awaitStat(p, "kv_sessions_pinned_now", 1);
        }
        awaitCancels(p, 1, 0, 0);
        awaitStat(p, "freed_by_abort", 1);
    }

    @Test
    void aQueuedDecodeClosedIsCancelledBeforeItsFirstTokenAndTheParkedKvIsNoCancelOfThePrefill() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmConfig dc = cfg();
        dc.maxRunning = 1;
        dc.tokenIntervalMs = 60_000;
        VllmEngine d = start(new VllmEngine(dc));
        ObjectNode client = completion(PROMPT, 4).put("stream", true);
        JsonNode params = prefill(p, "/v1/completions", client);
        SimHttp.Raw busy = SimHttp.Raw.post(d.port(), "/v1/completions", completion("busy", 40));
        awaitStat(d, "running", 1);
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/v1/completions", decodeOf(client, params))) {
            awaitStat(d, "waiting", 1);
        }
        awaitCancels(d, 0, 1, 0);
        // the decode told the prefill to free its parked KV: freed by an abort, not a cancel of a running request
        awaitStat(p, "freed_by_abort", 1);
        awaitCancels(p, 0, 0, 0);
        busy.close();
        awaitStat(d, "requests_aborted", 2);
        awaitCancels(d, 0, 1, 0); // an aggregated request is no handoff leg
    }

    @Test
    void aChatDecodeClosedAfterItsRoleEventIsCancelledBeforeItsFirstToken() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmConfig dc = cfg();
        dc.tokenIntervalMs = 60_000;
        VllmEngine d = start(new VllmEngine(dc));
        ObjectNode client = chat(PROMPT, 4).put("stream", true).put("ignore_eos", true);
        JsonNode params = prefill(p, "/v1/chat/completions", client);
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/v1/chat/completions", decodeOf(client, params))) {
            raw.readUntil("\"role\"");
        }
        awaitCancels(d, 0, 1, 0);
    }

    @Test
    void aDecodeClosedAfterItsFirstTokenIsCancelledMidStream() {
        VllmEngine p = start(new VllmEngine(cfg()));
        VllmConfig dc = cfg();
        dc.tokenIntervalMs = 60_000;
        VllmEngine d = start(new VllmEngine(dc));
        ObjectNode client = completion(PROMPT, 4).put("stream", true);
        JsonNode params = prefill(p, "/v1/completions", client);
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/v1/completions", decodeOf(client, params))) {
            raw.readUntil("\"text\"");
        }
        awaitCancels(d, 0, 0, 1);
        awaitCancels(p, 0, 0, 0);
    }
}
