package io.handoff.simulator.sglang;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.Http;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimHttp;
import io.handoff.simulator.SimTestBase;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Client cancels counted by phase on SGLang: a closed connection or an {@code /abort_request} naming a running rid.
 * The prefill leg is in its prefill until it answered (waiting for its decode included); the decode leg before its
 * first token while it waits for the KV. The phase is held still by an absent peer or a long token interval.
 */
class SglangCancelPhaseTest extends SimTestBase {
    private static final String PROMPT = "Explain disaggregated serving in one short paragraph please";
    private static final AtomicLong ROOMS = new AtomicLong(7_193_551_520_068_383_001L);

    private static SglangConfig cfg(Role role) {
        SglangConfig c = new SglangConfig();
        c.role = role;
        c.model = "m";
        return c;
    }

    private static ObjectNode generate(String rid, SglangEngine prefill, long room) {
        ObjectNode o = Http.obj().put("rid", rid).put("text", PROMPT).put("bootstrap_host", "127.0.0.1")
            .put("bootstrap_port", prefill.bootstrapPort()).put("bootstrap_room", room);
        o.putObject("sampling_params").put("max_new_tokens", 8).put("ignore_eos", true);
        return o;
    }

    @Test
    void aPrefillClosedWhileWaitingForItsDecodeIsCancelledDuringPrefill() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        try (SimHttp.Raw raw = SimHttp.Raw.post(p.port(), "/generate", generate("p", p, ROOMS.incrementAndGet()))) {
            awaitStat(p, "prefill_bootstrap_queue_reqs", 1);
        }
        awaitCancels(p, 1, 0, 0);
    }

    @Test
    void anAbortRequestOfARunningPrefillIsCancelledDuringPrefillOnce() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        var pending = SimHttp.postAsync(p.baseUrl() + "/generate", generate("abort-me", p, ROOMS.incrementAndGet()));
        awaitStat(p, "prefill_bootstrap_queue_reqs", 1);
        SimHttp.post(p.baseUrl() + "/abort_request", "{\"rid\":\"abort-me\"}");
        pending.join();
        SimHttp.post(p.baseUrl() + "/abort_request", "{\"rid\":\"abort-me\"}");
        awaitStat(p, "aborts_total", 2);
        awaitCancels(p, 1, 0, 0);
    }

    @Test
    void aDecodeClosedWhileWaitingForItsPrefillIsCancelledBeforeItsFirstToken() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        SglangEngine d = start(new SglangEngine(cfg(Role.DECODE)));
        ObjectNode body = generate("d", p, ROOMS.incrementAndGet()).put("stream", true);
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/generate", body)) {
            awaitStat(p, "decodes_waiting_for_prefill", 1);
        }
        awaitCancels(d, 0, 1, 0);
        awaitCancels(p, 0, 0, 0);
    }

    @Test
    void aDecodeClosedAfterItsFirstTokenIsCancelledMidStream() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        SglangConfig dc = cfg(Role.DECODE);
        dc.tokenIntervalMs = 60_000;
        SglangEngine d = start(new SglangEngine(dc));
        long room = ROOMS.incrementAndGet();
        var prefill = SimHttp.postAsync(p.baseUrl() + "/generate", generate("p", p, room));
        try (SimHttp.Raw raw = SimHttp.Raw.post(d.port(), "/generate", generate("d", p, room).put("stream", true))) {
            raw.readUntil("output_ids");
        }
        awaitCancels(d, 0, 0, 1);
        prefill.join();
        awaitCancels(p, 0, 0, 0);
    }
}
