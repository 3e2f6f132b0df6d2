package io.handoff.simulator.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.EngineStats;
import io.handoff.simulator.Family;
import io.handoff.simulator.FreeReason;
import io.handoff.simulator.Generation;
import io.handoff.simulator.Http;
import io.handoff.simulator.Job;
import io.handoff.simulator.KvHold;
import io.handoff.simulator.Leg;
import io.handoff.simulator.OutputModel;
import io.handoff.simulator.PeerCall;
import io.handoff.simulator.Reject;
import io.handoff.simulator.Rendezvous;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.openai.OpenAiRequest;
import io.handoff.simulator.openai.OpenAiWire;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** A simulated SGLang server; see the package documentation for the handoff it imitates. */
public final class SglangEngine extends SimEngine {
    static final String BOOTSTRAP = "bootstrap";
    static final String BOOTSTRAP_FAILED = "num_bootstrap_failed_reqs";
    static final String TRANSFER_FAILED = "num_transfer_failed_reqs";
    static final String DUPLICATE_ROOM_CRASHES = "duplicate_room_crashes";

    final SglangConfig cfg;
    private final OpenAiWire wire;
    /** Rooms in flight on this engine (either leg). */
    private final Map<Long, SglRequest> rooms = new HashMap<>();
    /** Prefill: admitted requests waiting for their decode. */
    private final Map<Long, SglRequest> bootstrapQueue = new HashMap<>();
    /** Prefill: requests whose KV is being computed and written. */
    private final Set<SglRequest> inflight = new HashSet<>();
    /** Prefill: decodes that reached the bootstrap server before their prefill. */
    private final Rendezvous decodes = new Rendezvous();
    /** Decode: open long polls to prefills. */
    private final Map<SglRequest, PeerCall> transfers = new HashMap<>();

    public SglangEngine(SglangConfig config) {
        super(config);
        this.cfg = config;
        OpenAiWire.Style s = new OpenAiWire.Style();
        s.matchedStop = true;
        this.wire = new OpenAiWire(s);
    }

    @Override
    public Family family() {
        return Family.SGLANG;
    }

    /** The bootstrap port of a prefill (the bound one), or the configured one on other roles. */
    public int bootstrapPort() {
        int p = auxPort(BOOTSTRAP);
        return p > 0 ? p : (cfg.bootstrapPort > 0 ? cfg.bootstrapPort : 8998);
    }

    @Override
    protected Map<String, Integer> auxServers() {
        return cfg.role == Role.PREFILL ? Map.of(BOOTSTRAP, cfg.bootstrapPort) : Map.of();
    }

    @Override
    protected void auxRoutes(String name, Router r) {
        r.get("/health").handler(rc -> rc.response().setStatusCode(200).end());
        r.get("/route").handler(rc -> Http.json(rc.response(), 200, Http.obj().put("prefill_attn_tp_size", 1)
            .put("prefill_dp_size", 1).put("prefill_pp_size", 1).put("page_size", cfg.blockSize)));
        r.put("/route").handler(rc -> rc.response().setStatusCode(200).end());
        r.post("/sim/rendezvous").handler(this::rendezvous);
    }

    @Override
    protected void routes(Router r) {
        r.post("/generate").handler(inference(rc -> handle(rc, SglRequest.generate(body(rc)))));
        r.post("/v1/completions").handler(inference(rc -> handle(rc,
            SglRequest.openai(OpenAiRequest.Kind.COMPLETION, body(rc)))));
        r.post("/v1/chat/completions").handler(inference(rc -> handle(rc,
            SglRequest.openai(OpenAiRequest.Kind.CHAT, body(rc)))));
        r.post("/abort_request").handler(this::abortRequest);
        r.get("/health").handler(this::health);
        r.get("/health_generate").handler(this::health);
        r.get("/server_info").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.serverInfo(this)));
        r.get("/get_server_info").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.serverInfo(this)));
        r.get("/model_info").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.modelInfo(this)));
        r.get("/get_model_info").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.modelInfo(this)));
        r.get("/v1/loads").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.loads(this)));
        r.get("/v1/models").handler(rc -> Http.json(rc.response(), 200, SglangDiscovery.models(this)));
        r.get("/metrics").handler(rc -> Http.text(rc.response(), 200, "text/plain; version=0.0.4",
            SglangDiscovery.metrics(this)));
    }

    private void health(RoutingContext rc) {
        int s = faults.healthStatus();
        rc.response().setStatusCode(s > 0 ? s : 200).end();
    }

    @Override
    protected void sendError(RoutingContext rc, int status, String message) {
        if ("/generate".equals(rc.request().path()) && status == 400) {
            ObjectNode o = Http.obj();
            o.putObject("error").put("message", message);
            Http.json(rc.response(), status, o);
        } else {
            Http.json(rc.response(), status, SglangWire.error(status, message));
        }
    }

    @Override
    protected void onClientClosed(Job j) {
        // counted where the client left, even if the engine notices it later
        cancelled(j);
        if (cfg.disconnectAbortDelayMs > 0) {
            vertx.setTimer(cfg.disconnectAbortDelayMs, t -> abort(j));
        } else {
            abort(j);
        }
    }

    // ------------------------------------------------------------------ requests

    private void handle(RoutingContext rc, SglRequest r) {
        checkFits(r.promptIds.length, r.maxNew);
        if (cfg.role != Role.BOTH) {
            if (!r.hasRoom()) {
                throw Reject.badRequest("Disaggregated request received without bootstrap room id");
            }
            if (rooms.containsKey(r.room)) {
                // sglang#40125: a duplicate in-flight bootstrap_room crashes the scheduler
                stats.inc(DUPLICATE_ROOM_CRASHES);
                crashNow(cfg.restartAfterCrashMs);
                return;
            }
        }
        Job job = newJob(r.rid, rc);
        job.leg(cfg.role == Role.PREFILL ? Leg.PREFILL : cfg.role == Role.DECODE ? Leg.DECODE : Leg.NONE);
        job.state(r);
        r.job = job;
        if (r.stream) {
            r.sse = sse(rc);
            r.sse.open();
        }
        switch (cfg.role) {
            case PREFILL:
                prefill(r);
                break;
            case DECODE:
                decode(r);
                break;
            default:
                aggregated(r);
        }
    }

    private void aggregated(SglRequest r) {
        scheduler.submit(r.job, blocksFor(r.promptIds.length, r.maxNew), j -> j.timer(vertx, prefillMs(r.promptIds),
            () -> deliver(r, run(r, OutputModel.fingerprint(r.promptIds), null), null)));
    }

    private Generation run(SglRequest r, long seed, Integer firstToken) {
        return Generation.run(seed, OutputModel.eosIndex(r.promptIds), firstToken, r.maxNew, r.minNew, r.ignoreEos,
            r.stop);
    }

    /** Answers the client with a generation; the job ends when the answer is out. */
    private void deliver(SglRequest r, Generation g, JsonNode finishOverride) {
        Job job = r.job;
        JsonNode finish = finishOverride != null ? finishOverride : SglangWire.finishReason(g);
        if (r.api == SglRequest.Api.GENERATE) {
            if (r.sse != null) {
                emit(job, r.sse, SglangWire.streamEvents(r, g, finish), SglangWire.firstTokenEvent(g),
                    () -> finish(job));
            } else {
                ObjectNode out = SglangWire.output(r, g, g.size(), finish, true);
                afterDecoding(job, g.size(), () -> {
                    finish(job);
                    respondLater(() -> Http.json(job.rc().response(), 200, out));
                });
            }
            return;
        }
        ObjectNode usage = OpenAiWire.usage(r.promptIds.length, g.size(), null);
        if (r.sse != null) {
            emit(job, r.sse, wire.streamEvents(r.openai, "cmpl-" + r.rid, r.created, config.model, g, usage),
                OpenAiWire.firstTokenEvent(r.openai, g), () -> finish(job));
        } else {
            ObjectNode out = wire.response(r.openai, r.rid, r.created, config.model, g, r.promptIds.length, usage);
            afterDecoding(job, g.size(), () -> {
                finish(job);
                respondLater(() -> Http.json(job.rc().response(), 200, out));
            });
        }
    }

    /**
     * Answers an aborted request: {@code statusCode} null for {@code /abort_request} (finish reason abort, HTTP 200),
     * 500/503 for scheduler aborts (HTTP error when not streaming; an abort chunk then [DONE] when streaming).
     */
    private void answerAbort(SglRequest r, String message, Integer statusCode) {
        RoutingContext rc = r.job.rc();
        if (r.sse != null) {
            if (r.api == SglRequest.Api.GENERATE) {
                r.sse.event(Http.write(SglangWire.output(r, null, 0, SglangWire.abortFinish(message, statusCode),
                    true)));
            } else if (statusCode == null) {
                ObjectNode c = Http.obj().put("id", "cmpl-" + r.rid).put("object",
                    r.api == SglRequest.Api.CHAT ? "chat.completion.chunk" : "text_completion");
                c.putArray("choices").addObject().put("index", 0).put("finish_reason", "abort");
                r.sse.event(Http.write(c));
            } else {
                ObjectNode e = Http.obj();
                e.putObject("error").put("message", message).put("code", statusCode);
                r.sse.event(Http.write(e));
            }
            r.sse.done();
            return;
        }
        if (statusCode != null) {
            Http.json(rc.response(), statusCode, SglangWire.error(statusCode, message));
        } else if (r.api == SglRequest.Api.GENERATE) {
            Http.json(rc.response(), 200, SglangWire.output(r, null, 0, SglangWire.abortFinish(message, null), true));
        } else {
            ObjectNode o = Http.obj().put("id", r.rid).put("object",
                r.api == SglRequest.Api.CHAT ? "chat.completion" : "text_completion").put("model", config.model);
            ObjectNode c = o.putArray("choices").addObject().put("index", 0).put("finish_reason", "abort");
            if (r.api == SglRequest.Api.CHAT) {
                c.putObject("message").put("role", "assistant").put("content", "");
            } else {
                c.put("text", "");
            }
            Http.json(rc.response(), 200, o);
        }
    }

    // ------------------------------------------------------------------ prefill leg

    private static String key(long room) {
        return "room:" + room;
    }

    private void prefill(SglRequest r) {
        rooms.put(r.room, r);
        String key = key(r.room);
        // a prefill abort frees the KV but does not notify the decode (stock Mooncake before sglang PR #28651)
        r.job.onAbort(() -> {
            holds.release(key, FreeReason.ABORT);
            forgetPrefill(r);
        });
        scheduler.submit(r.job, blocksFor(r.promptIds.length, 1), j -> {
            holds.pin(key, "bootstrap", j.takeBlocks(pool.blocksFor(r.promptIds.length)), cfg.bootstrapTimeoutMs,
                h -> bootstrapTimedOut(r));
            if (r.roomReusedBySamples()) {
                return; // every sample reuses the room: the pair never completes (sglang PRs #26486, #30723)
            }
            Rendezvous.Waiter w = decodes.take(key);
            if (w != null) {
                transfer(r, w);
            } else {
                bootstrapQueue.put(r.room, r);
            }
        });
    }

    private void forgetPrefill(SglRequest r) {
        rooms.remove(r.room, r);
        bootstrapQueue.remove(r.room, r);
        inflight.remove(r);
    }

    private void bootstrapTimedOut(SglRequest r) {
        stats.inc(BOOTSTRAP_FAILED);
        forgetPrefill(r);
        answerAbort(r, "Request " + r.room + " timed out after " + cfg.bootstrapTimeoutMs / 1000.0
            + "s in KVPoll.Bootstrapping", 500);
        fail(r.job);
    }

    /** The bootstrap server: a decode announces itself for a room (it arrived first, or its prefill waits). */
    private void rendezvous(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        long room = b.path("room").asLong();
        Rendezvous.Waiter w = decodes.register(key(room), rc, b);
        SglRequest p = bootstrapQueue.get(room);
        if (p != null) {
            decodes.take(key(room));
            transfer(p, w);
        }
    }

    private void transfer(SglRequest r, Rendezvous.Waiter w) {
        bootstrapQueue.remove(r.room, r);
        inflight.add(r);
        r.pairedDecode = w;
        String key = key(r.room);
        KvHold h = holds.get(key);
        h.kind("transferring");
        holds.setTtl(h, 0); // out of the bootstrap queue: the bootstrap timeout no longer applies
        r.job.timer(vertx, prefillMs(r.promptIds) + config.transferLatencyMs, () -> {
            long fp = OutputModel.fingerprint(r.promptIds);
            Generation first = Generation.run(fp, OutputModel.eosIndex(r.promptIds), null, Math.min(1, r.maxNew),
                0, r.ignoreEos, r.stop);
            forgetPrefill(r);
            if (!w.isOpen()) {
                holds.release(key, FreeReason.FAILURE);
                stats.inc(TRANSFER_FAILED);
                answerAbort(r, "Prefill transfer failed for request rank=0 rid=" + r.rid + " bootstrap_room="
                    + r.room + " with exception KVTransferError: decode went away", 500);
                fail(r.job);
                return;
            }
            holds.release(key, FreeReason.PULL);
            ObjectNode kv = Http.obj().put("status", "ok").put("kv_fingerprint", fp)
                .put("prompt_tokens", r.promptIds.length);
            if (first.size() > 0) {
                kv.put("first_token", first.id(0));
            }
            w.respond(200, kv);
            deliver(r, first, r.api == SglRequest.Api.GENERATE ? SglangWire.prefillFinish() : null);
        });
    }

    // ------------------------------------------------------------------ decode leg

    private void decode(SglRequest r) {
        rooms.put(r.room, r);
        String key = key(r.room);
        r.job.onAbort(() -> {
            holds.release(key, FreeReason.ABORT);
            rooms.remove(r.room, r);
            PeerCall c = transfers.remove(r);
            if (c != null) {
                c.cancel();
            }
        });
        scheduler.submit(r.job, blocksFor(r.promptIds.length, r.maxNew), j -> {
            holds.pin(key, "prealloc", j.takeBlocks(pool.blocksFor(r.promptIds.length)), cfg.waitingTimeoutMs,
                h -> waitingTimedOut(r));
            if (r.roomReusedBySamples()) {
                return; // hangs until the waiting timeout
            }
            if (r.bootstrapHost == null) {
                decodeFailed(r, "Failed to get bootstrap info: bootstrap_host is not set");
                return;
            }
            int port = r.bootstrapPort != null ? r.bootstrapPort : bootstrapPort();
            ObjectNode hello = Http.obj().put("room", r.room).put("rid", r.rid)
                .put("decode_instance", identity.instanceId());
            PeerCall call = PeerCall.post(peers, r.bootstrapHost, port, "/sim/rendezvous", hello);
            transfers.put(r, call);
            call.result().onComplete(ar -> {
                transfers.remove(r);
                if (j.isAborted() || j.isDone()) {
                    return;
                }
                if (ar.failed()) {
                    // the heartbeat declares the prefill dead after HEARTBEAT_MAX_FAILURE missed intervals
                    j.timer(vertx, cfg.heartbeatIntervalMs * cfg.heartbeatMaxFailure, () -> decodeFailed(r,
                        "Failed to get kvcache from prefill instance, it might be dead"));
                    return;
                }
                if (ar.result().status != 200) {
                    decodeFailed(r, "KV transfer failed for bootstrap_room=" + r.room);
                    return;
                }
                holds.release(key, FreeReason.RECEIVED);
                rooms.remove(r.room, r);
                JsonNode kv = ar.result().body;
                Integer first = kv.has("first_token") ? kv.get("first_token").asInt() : null;
                deliver(r, run(r, kv.path("kv_fingerprint").asLong(), first), null);
            });
        });
    }

    private void decodeFailed(SglRequest r, String message) {
        holds.release(key(r.room), FreeReason.FAILURE);
        rooms.remove(r.room, r);
        stats.inc(TRANSFER_FAILED);
        answerAbort(r, message, 500);
        fail(r.job);
    }

    private void waitingTimedOut(SglRequest r) {
        rooms.remove(r.room, r);
        PeerCall c = transfers.remove(r);
        if (c != null) {
            c.cancel();
        }
        stats.inc(TRANSFER_FAILED);
        answerAbort(r, "Request " + r.room + " timed out after " + cfg.waitingTimeoutMs / 1000.0
            + "s in KVPoll.WaitingForInput", 500);
        fail(r.job);
    }

    // ------------------------------------------------------------------ abort endpoint

    private void abortRequest(RoutingContext rc) {
        JsonNode b = rc.body().length() == 0 ? Http.obj() : Http.parse(rc.body().asString());
        boolean all = b.path("abort_all").asBoolean(false);
        String rid = b.path("rid").asText("");
        if (!all && !rid.isEmpty()) {
            aborts.aborted("rid " + rid);
        }
        if (all || !rid.isEmpty()) {
            for (Job j : new ArrayList<>(jobs)) {
                SglRequest r = j.state();
                if (r != null && !j.isDone() && (all || r.rid.startsWith(rid))) {
                    cancelled(j);
                    answerAbort(r, "Abort request rid=" + r.rid, null);
                    abort(j);
                }
            }
        }
        rc.response().setStatusCode(200).end();
    }

    @Override
    protected void onCrash() {
        for (PeerCall c : new ArrayList<>(transfers.values())) {
            c.cancel();
        }
        transfers.clear();
        rooms.clear();
        bootstrapQueue.clear();
        inflight.clear();
        decodes.clear();
    }

    @Override
    protected void familyStats(ObjectNode out) {
        out.put("disaggregation_mode", cfg.disaggregationMode());
        out.put("bootstrap_port", bootstrapPort());
        out.put("rooms_in_flight", rooms.size());
        out.put("prefill_bootstrap_queue_reqs", bootstrapQueue.size());
        out.put("prefill_inflight_queue_reqs", inflight.size());
        out.put("decode_transfer_queue_reqs", transfers.size());
        out.put("decodes_waiting_for_prefill", decodes.size());
        for (String k : new String[] {BOOTSTRAP_FAILED, TRANSFER_FAILED, DUPLICATE_ROOM_CRASHES}) {
            out.put(k, stats.get(k));
        }
        out.put("requests_total_seen", stats.get(EngineStats.REQUESTS_TOTAL));
    }
}
