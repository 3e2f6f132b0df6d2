package io.handoff.simulator.sglang;

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
import io.handoff.simulator.Tokenizer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SglangTest extends SimTestBase {
    private static final String PROMPT = "Explain disaggregated serving in one short paragraph please";
    private static final AtomicLong ROOMS = new AtomicLong(6_593_551_520_068_383_758L);

    private static SglangConfig cfg(Role role) {
        SglangConfig c = new SglangConfig();
        c.role = role;
        c.model = "m";
        return c;
    }

    private SglangEngine[] pair(SglangConfig p, SglangConfig d) {
        return new SglangEngine[] {start(new SglangEngine(p)), start(new SglangEngine(d))};
    }

    private static ObjectNode generate(String rid, int maxNew) {
        ObjectNode o = Http.obj().put("rid", rid).put("text", PROMPT);
        o.putObject("sampling_params").put("max_new_tokens", maxNew).put("ignore_eos", true);
        return o;
    }

    private static ObjectNode withRoom(ObjectNode body, SglangEngine prefill, long room) {
        return body.deepCopy().put("bootstrap_host", "127.0.0.1").put("bootstrap_port", prefill.bootstrapPort())
            .put("bootstrap_room", room);
    }

    @Test
    void concurrentLegsGiveTheAggregatedTokensAndFreeBothSides() {
        SglangEngine agg = start(new SglangEngine(cfg(Role.BOTH)));
        SglangEngine[] pd = pair(cfg(Role.PREFILL), cfg(Role.DECODE));
        long room = ROOMS.incrementAndGet();
        ObjectNode body = generate("3f0c1e7a9b8d4c2e9a1f5b6c7d8e9f00", 10);

        JsonNode aggregated = SimHttp.post(agg.baseUrl() + "/generate", body).json;
        CompletableFuture<SimHttp.Resp> p = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(body, pd[0], room));
        CompletableFuture<SimHttp.Resp> d = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(body, pd[0], room));

        SimHttp.Resp pr = p.join();
        SimHttp.Resp dr = d.join();
        assertEquals(200, pr.status, pr.raw);
        assertEquals(200, dr.status, dr.raw);
        assertEquals("length", pr.json.path("meta_info").path("finish_reason").path("type").asText());
        assertEquals(0, pr.json.path("meta_info").path("finish_reason").path("length").asInt());
        assertEquals(1, pr.json.path("output_ids").size());
        assertEquals(aggregated.path("text").asText(), dr.json.path("text").asText());
        assertEquals(aggregated.path("output_ids"), dr.json.path("output_ids"));
        assertEquals(pr.json.path("output_ids").get(0), dr.json.path("output_ids").get(0),
            "the decode's output starts with the prefill's first token");
        assertEquals("3f0c1e7a9b8d4c2e9a1f5b6c7d8e9f00", dr.json.path("meta_info").path("id").asText());
        assertEquals(0, pd[0].stat("kv_blocks_pinned_now"));
        assertEquals(0, pd[1].stat("kv_blocks_pinned_now"));
        assertEquals(1, pd[0].stat("freed_by_pull"));
        assertEquals(1, pd[1].stat("transfers_received"));
    }

    @Test
    void rendezvousWorksInBothOrders() {
        SglangEngine agg = start(new SglangEngine(cfg(Role.BOTH)));
        SglangEngine[] pd = pair(cfg(Role.PREFILL), cfg(Role.DECODE));
        ObjectNode body = generate("order", 6);
        String expected = SimHttp.post(agg.baseUrl() + "/generate", body).json.path("text").asText();

        long room1 = ROOMS.incrementAndGet();
        var d1 = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(body, pd[0], room1));
        awaitStat(pd[0], "decodes_waiting_for_prefill", 1);
        assertFalse(d1.isDone(), "the decode waits for its prefill");
        assertEquals(1, pd[1].stat("kv_sessions_pinned_now"), "the decode preallocated");
        var p1 = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(body, pd[0], room1));
        assertEquals(expected, d1.join().json.path("text").asText());
        assertEquals(200, p1.join().status);

        long room2 = ROOMS.incrementAndGet();
        var p2 = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(body, pd[0], room2));
        awaitStat(pd[0], "prefill_bootstrap_queue_reqs", 1);
        assertFalse(p2.isDone(), "the prefill blocks in bootstrap until its decode connects");
        assertEquals(1, pd[0].stat("kv_sessions_pinned_now"));
        var d2 = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(body, pd[0], room2));
        assertEquals(expected, d2.join().json.path("text").asText());
        assertEquals(200, p2.join().status);
        assertEquals(2, pd[0].stat("freed_by_pull"));
        assertEquals(0, pd[0].stat("kv_sessions_pinned_now"));
    }

    @Test
    void openAiChatStreamThroughPrefillAndDecode() {
        SglangEngine agg = start(new SglangEngine(cfg(Role.BOTH)));
        SglangEngine[] pd = pair(cfg(Role.PREFILL), cfg(Role.DECODE));
        ObjectNode chat = Http.obj().put("model", "m").put("max_tokens", 7).put("stream", true).put("ignore_eos", true)
            .put("rid", "chat-1");
        chat.putArray("messages").addObject().put("role", "user").put("content", PROMPT);
        chat.putObject("stream_options").put("include_usage", true);
        String expected = SimHttp.stream(agg.baseUrl() + "/v1/chat/completions", chat).text();
        long room = ROOMS.incrementAndGet();
        var p = CompletableFuture.supplyAsync(
            () -> SimHttp.stream(pd[0].baseUrl() + "/v1/chat/completions", withRoom(chat, pd[0], room)));
        SimHttp.Stream d = SimHttp.stream(pd[1].baseUrl() + "/v1/chat/completions", withRoom(chat, pd[0], room));
        assertTrue(d.done);
        assertEquals(expected, d.text());
        assertEquals(7, d.last().path("usage").path("completion_tokens").asInt());
        assertTrue(p.join().done);
    }

    @Test
    void prefillBootstrapTimeoutFreesAndAnswers500() {
        SglangConfig pc = cfg(Role.PREFILL);
        pc.bootstrapTimeoutMs = 150;
        SglangEngine p = start(new SglangEngine(pc));
        SimHttp.Resp r = SimHttp.post(p.baseUrl() + "/generate", withRoom(generate("lonely", 4), p, 11));
        assertEquals(500, r.status);
        assertTrue(r.json.path("message").asText().contains("KVPoll.Bootstrapping"), r.raw);
        assertEquals(1, p.stat("freed_by_timeout"));
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("num_bootstrap_failed_reqs"));
        assertTrue(SimHttp.get(p.baseUrl() + "/metrics").raw.contains("sglang:num_bootstrap_failed_reqs_total"));
    }

    @Test
    void prefillAbortIsNotSeenByTheDecodeWhichWaitsForItsTimeout() {
        SglangConfig pc = cfg(Role.PREFILL);
        pc.prefillLatencyMs = 5_000;
        SglangConfig dc = cfg(Role.DECODE);
        dc.waitingTimeoutMs = 400;
        SglangEngine[] pd = pair(pc, dc);
        long room = ROOMS.incrementAndGet();
        var d = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(generate("pair-d", 4), pd[0], room));
        awaitStat(pd[0], "decodes_waiting_for_prefill", 1);
        var p = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(generate("pair-p", 4), pd[0], room));
        awaitStat(pd[0], "prefill_inflight_queue_reqs", 1);

        assertEquals(200, SimHttp.post(pd[0].baseUrl() + "/abort_request", "{\"rid\":\"pair-p\"}").status);
        SimHttp.Resp pr = p.join();
        assertEquals(200, pr.status);
        assertEquals("abort", pr.json.path("meta_info").path("finish_reason").path("type").asText());
        assertEquals(1, pd[0].stat("freed_by_abort"));
        assertEquals(0, pd[0].stat("kv_blocks_pinned_now"));

        SimHttp.Resp dr = d.join();
        assertEquals(500, dr.status, "the decode only learns by its own timeout");
        assertTrue(dr.json.path("message").asText().contains("KVPoll.WaitingForInput"), dr.raw);
        assertEquals(1, pd[1].stat("freed_by_timeout"));
        assertEquals(0, pd[1].stat("kv_blocks_pinned_now"));
    }

    @Test
    void decodeDisconnectFreesTheDecodeButThePrefillWaitsForItsBootstrapTimeout() {
        SglangConfig pc = cfg(Role.PREFILL);
        pc.bootstrapTimeoutMs = 300;
        SglangEngine[] pd = pair(pc, cfg(Role.DECODE));
        long room = ROOMS.incrementAndGet();
        try (SimHttp.Raw raw = SimHttp.Raw.post(pd[1].port(), "/generate", withRoom(generate("d", 4), pd[0], room))) {
            awaitStat(pd[0], "decodes_waiting_for_prefill", 1);
        }
        awaitStat(pd[1], "freed_by_abort", 1);
        awaitStat(pd[0], "decodes_waiting_for_prefill", 0);
        SimHttp.Resp pr = SimHttp.post(pd[0].baseUrl() + "/generate", withRoom(generate("p", 4), pd[0], room));
        assertEquals(500, pr.status);
        assertEquals(1, pd[0].stat("freed_by_timeout"));
    }

    @Test
    void aSecondAbortOfTheSameRidIsCountedAsARepeatedDischarge() {
        SglangConfig c = cfg(Role.BOTH);
        c.tokenIntervalMs = 20;
        SglangEngine e = start(new SglangEngine(c));
        var a = SimHttp.postAsync(e.baseUrl() + "/generate", generate("twice", 200));
        awaitStat(e, "running", 1);
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"twice\"}").status);
        assertEquals("abort", a.join().json.path("meta_info").path("finish_reason").path("type").asText());
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"other\"}").status);
        assertEquals(0, e.stat("aborts_repeated_total"), "one abort per rid is no repeat, even of a rid not running");

        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"twice\"}").status);
        assertEquals(3, e.stat("aborts_total"));
        assertEquals(1, e.stat("aborts_repeated_total"), "the rid was aborted already: a second discharge");
        var listed = SimHttp.get(e.baseUrl() + "/sim/stats").json.path("aborts_repeated");
        assertEquals(1, listed.size());
        assertEquals("rid twice", listed.get(0).path("id").asText());
        assertTrue(listed.get(0).path("again_at_ms").asLong() >= listed.get(0).path("first_at_ms").asLong());
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"abort_all\":true}").status);
        assertEquals(1, e.stat("aborts_repeated_total"), "abort_all names no id");
    }

    @Test
    void abortRequestMatchesRidsByPrefixAndAlwaysAnswers200() {
        SglangConfig c = cfg(Role.BOTH);
        c.tokenIntervalMs = 20;
        SglangEngine e = start(new SglangEngine(c));
        var a1 = SimHttp.postAsync(e.baseUrl() + "/generate", generate("abc-1", 200));
        var a2 = SimHttp.postAsync(e.baseUrl() + "/generate", generate("abc-2", 200));
        var x = SimHttp.postAsync(e.baseUrl() + "/generate", generate("xyz", 10));
        awaitStat(e, "running", 3);
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"nope\"}").status);
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"\"}").status);
        assertEquals(3, e.stat("running"), "unknown and empty rids abort nothing");
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"rid\":\"abc\"}").status);
        assertEquals("abort", a1.join().json.path("meta_info").path("finish_reason").path("type").asText());
        assertEquals("abort", a2.join().json.path("meta_info").path("finish_reason").path("type").asText());
        assertEquals("length", x.join().json.path("meta_info").path("finish_reason").path("type").asText());

        var b = SimHttp.postAsync(e.baseUrl() + "/generate", generate("b", 200));
        awaitStat(e, "running", 1);
        assertEquals(200, SimHttp.post(e.baseUrl() + "/abort_request", "{\"abort_all\":true}").status);
        assertEquals("abort", b.join().json.path("meta_info").path("finish_reason").path("type").asText());
        awaitStat(e, "running", 0);
        assertEquals(e.stat("kv_blocks_total"), e.stat("kv_blocks_free"));
    }

    @Test
    void duplicateInFlightRoomCrashesEachSchedulerThatSeesIt() {
        SglangConfig pc = cfg(Role.PREFILL);
        SglangEngine[] pd = pair(pc, cfg(Role.DECODE));
        String before = pd[0].identity().instanceId();
        var first = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(generate("one", 4), pd[0], 77));
        awaitStat(pd[0], "prefill_bootstrap_queue_reqs", 1);
        var dup = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(generate("two", 4), pd[0], 77));
        assertTrue(dup.handle((r, t) -> t != null).join(), "the duplicate gets no answer");
        assertTrue(first.handle((r, t) -> t != null).join(), "nor does the request in flight");
        assertFalse(pd[0].isUp());
        assertEquals(1, pd[0].stat("duplicate_room_crashes"));
        assertTrue(pd[0].stat("kv_blocks_lost_by_crash") > 0);

        var d1 = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(generate("d1", 4), pd[0], 78));
        awaitStat(pd[1], "rooms_in_flight", 1);
        var d2 = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(generate("d2", 4), pd[0], 78));
        assertTrue(d2.handle((r, t) -> t != null).join());
        assertTrue(d1.handle((r, t) -> t != null).join());
        assertFalse(pd[1].isUp());

        pd[0].restart();
        assertTrue(pd[0].isUp());
        assertNotEquals(before, pd[0].identity().instanceId());
        assertEquals(0, pd[0].stat("rooms_in_flight"));
    }

    @Test
    void nGreaterThanOneWithOneRoomHangsUntilTheTimeouts() {
        SglangConfig pc = cfg(Role.PREFILL);
        pc.bootstrapTimeoutMs = 250;
        SglangConfig dc = cfg(Role.DECODE);
        dc.waitingTimeoutMs = 250;
        SglangEngine[] pd = pair(pc, dc);
        ObjectNode body = generate("n2", 4);
        ((ObjectNode) body.get("sampling_params")).put("n", 2);
        long room = ROOMS.incrementAndGet();
        var p = SimHttp.postAsync(pd[0].baseUrl() + "/generate", withRoom(body, pd[0], room));
        var d = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(body, pd[0], room));
        assertEquals(500, p.join().status);
        assertEquals(500, d.join().status);
        assertEquals(1, pd[0].stat("freed_by_timeout"));
        assertEquals(1, pd[1].stat("freed_by_timeout"));
    }

    @Test
    void disaggregatedEnginesRejectRequestsWithoutARoom() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        SimHttp.Resp r = SimHttp.post(p.baseUrl() + "/generate", generate("x", 3));
        assertEquals(400, r.status);
        assertEquals("Disaggregated request received without bootstrap room id",
            r.json.path("error").path("message").asText());
    }

    @Test
    void deadPrefillIsDetectedByTheDecodeHeartbeat() {
        SglangConfig dc = cfg(Role.DECODE);
        dc.heartbeatIntervalMs = 30;
        SglangEngine[] pd = pair(cfg(Role.PREFILL), dc);
        long room = ROOMS.incrementAndGet();
        var d = SimHttp.postAsync(pd[1].baseUrl() + "/generate", withRoom(generate("d", 4), pd[0], room));
        awaitStat(pd[0], "decodes_waiting_for_prefill", 1);
        pd[0].crash(-1);
        SimHttp.Resp r = d.join();
        assertEquals(500, r.status);
        assertTrue(r.json.path("message").asText().contains("it might be dead"));
        assertEquals(1, pd[1].stat("freed_by_failure"));
        assertEquals(0, pd[1].stat("kv_blocks_pinned_now"));
    }

    @Test
    void streamingGenerateIsCumulativeAndCanBeCut() {
        SglangEngine e = start(new SglangEngine(cfg(Role.BOTH)));
        ObjectNode body = generate("s", 5).put("stream", true);
        SimHttp.Stream s = SimHttp.stream(e.baseUrl() + "/generate", body);
        assertTrue(s.done);
        assertEquals(5, s.events.size());
        assertEquals(1, s.events.get(0).path("output_ids").size());
        assertEquals(5, s.last().path("output_ids").size());
        assertTrue(s.last().path("text").asText().startsWith(s.events.get(0).path("text").asText()));
        e.faults().cutStreams(2, 1);
        SimHttp.Stream cut = SimHttp.stream(e.baseUrl() + "/generate", body);
        assertEquals(2, cut.events.size());
        assertFalse(cut.done);
    }

    @Test
    void discoveryEndpoints() {
        SglangEngine p = start(new SglangEngine(cfg(Role.PREFILL)));
        JsonNode info = SimHttp.get(p.baseUrl() + "/server_info").json;
        assertEquals("prefill", info.path("disaggregation_mode").asText());
        assertEquals(p.bootstrapPort(), info.path("disaggregation_bootstrap_port").asInt());
        assertEquals("follow_bootstrap_room", info.path("load_balance_method").asText());
        assertEquals(info, SimHttp.get(p.baseUrl() + "/get_server_info").json);
        assertTrue(SimHttp.get(p.baseUrl() + "/model_info").json.path("is_generation").asBoolean());
        JsonNode loads = SimHttp.get(p.baseUrl() + "/v1/loads").json;
        assertEquals("prefill", loads.path("loads").path(0).path("disaggregation").path("mode").asText());
        assertEquals(200, SimHttp.get(p.baseUrl() + "/health").status);
        assertEquals(200, SimHttp.get("http://127.0.0.1:" + p.bootstrapPort() + "/health").status);
        assertEquals(8192, SimHttp.get(p.baseUrl() + "/v1/models").json.path("data").path(0).path("max_model_len")
            .asInt());
        assertEquals(Tokenizer.encode(PROMPT).length, Tokenizer.encode(PROMPT).length);
    }
}
