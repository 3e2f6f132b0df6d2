package io.handoff.simulator.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.simulator.AbortLedger;
import io.handoff.simulator.EngineStats;
import io.handoff.simulator.Family;
import io.handoff.simulator.FreeReason;
import io.handoff.simulator.Generation;
import io.handoff.simulator.HoldTable;
import io.handoff.simulator.Http;
import io.handoff.simulator.Job;
import io.handoff.simulator.KvHold;
import io.handoff.simulator.Leg;
import io.handoff.simulator.OutputModel;
import io.handoff.simulator.PeerCall;
import io.handoff.simulator.Reject;
import io.handoff.simulator.Scheduler;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.SseWriter;
import io.handoff.simulator.openai.OpenAiRequest;
import io.handoff.simulator.openai.OpenAiWire;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A simulated vLLM server ({@code vllm serve --kv-transfer-config '{"kv_connector":"NixlConnector",...}'}).
 *
 * <p>Per request, from {@code kv_transfer_params}:
 * <ul>
 *   <li>{@code do_remote_decode: true}: prefill leg. The prompt's blocks are pinned from admission; an abort before the
 *       prefill finishes frees them; once it finished with length (or, lease builds, stop) they stay pinned for a
 *       remote decode and the non-streaming response carries the params. Otherwise {@code kv_transfer_params} is
 *       null and the blocks are freed at once.</li>
 *   <li>{@code do_remote_prefill: true} with all of remote_block_ids, remote_engine_id, remote_request_id,
 *       remote_host, remote_port: decode leg, which reads the blocks from the prefill's side channel. If a key is
 *       missing the decode silently prefills locally ({@code local_prefill_fallbacks}).</li>
 *   <li>neither: an ordinary aggregated request.</li>
 * </ul>
 */
public final class VllmEngine extends SimEngine {
    static final String SIDE_CHANNEL = "side_channel";
    static final String EXPIRED_REQS = "nixl_num_kv_expired_reqs";
    static final String FAILED_TRANSFERS = "nixl_num_failed_transfers";
    static final String FAILED_NOTIFICATIONS = "nixl_num_failed_notifications";
    static final String UNRECOGNIZED_READS = "nixl_unrecognized_reads";
    static final String HEARTBEATS_SENT = "nixl_heartbeats_sent";
    static final String HEARTBEATS_RECEIVED = "nixl_heartbeats_received";

    final VllmConfig cfg;
    private final OpenAiWire wire = new OpenAiWire(new OpenAiWire.Style());
    private final NixlSideChannel sideChannel;
    private final VllmDecodeLeg decodeLeg;

    public VllmEngine(VllmConfig config) {
        super(config);
        this.cfg = config;
        this.sideChannel = new NixlSideChannel(this);
        this.decodeLeg = new VllmDecodeLeg(this);
    }

    @Override
    public Family family() {
        return Family.VLLM;
    }

    @Override
    protected Map<String, Integer> auxServers() {
        return Map.of(SIDE_CHANNEL, cfg.sideChannelPort);
    }

    @Override
    protected void auxRoutes(String name, Router router) {
        sideChannel.routes(router);
    }

    /** The bound NIXL side-channel port, advertised as {@code remote_port}. */
    public int sideChannelPort() {
        return auxPort(SIDE_CHANNEL);
    }

    @Override
    protected void routes(Router r) {
        r.post("/v1/completions").handler(inference(rc -> handle(rc, OpenAiRequest.Kind.COMPLETION)));
        r.post("/v1/chat/completions").handler(inference(rc -> handle(rc, OpenAiRequest.Kind.CHAT)));
        r.get("/health").handler(rc -> {
            int s = faults.healthStatus();
            rc.response().setStatusCode(s > 0 ? s : 200).end();
        });
        r.get("/v1/models").handler(rc -> Http.json(rc.response(), 200, VllmDiscovery.models(this)));
        r.get("/metrics").handler(rc -> Http.text(rc.response(), 200, "text/plain; version=0.0.4; charset=utf-8",
            VllmDiscovery.metrics(this)));
        r.get("/version").handler(rc -> Http.json(rc.response(), 200, Http.obj().put("version", "0.11.0+sim")));
    }

    @Override
    protected void sendError(RoutingContext rc, int status, String message) {
        Http.json(rc.response(), status, error(status, message));
    }

    static ObjectNode error(int status, String message) {
        String type;
        switch (status) {
            case 400:
                type = "BadRequestError";
                break;
            case 404:
                type = "NotFoundError";
                break;
            case 500:
                type = "InternalServerError";
                break;
            case 503:
                type = "ServiceUnavailableError";
                break;
            default:
                type = "Error";
        }
        ObjectNode o = Http.obj();
        o.putObject("error").put("message", message).put("type", type).putNull("param").put("code", status);
        return o;
    }

    // ------------------------------------------------------------------ requests

    private void handle(RoutingContext rc, OpenAiRequest.Kind kind) {
        ObjectNode body = body(rc);
        JsonNode ktp = cfg.kvConnector ? body.get("kv_transfer_params") : null;
        boolean remoteDecode = ktp != null && ktp.isObject() && ktp.path("do_remote_decode").asBoolean(false);
        boolean remotePrefill = ktp != null && ktp.isObject() && ktp.path("do_remote_prefill").asBoolean(false);
        OpenAiRequest req;
        try {
            req = validate(kind, body);
        } catch (Reject e) {
            if (remotePrefill && cfg.mode == VllmConfig.Mode.LEASE && VllmDecodeLeg.complete(ktp)) {
                // since vLLM PR #41269 a decode that rejects a request tells the prefill to free its blocks
                decodeLeg.notifyPrefill((ObjectNode) ktp, "reject");
            }
            throw e;
        }
        String xrid = rc.request().getHeader("X-Request-Id");
        if (xrid == null || xrid.isBlank()) {
            xrid = body.path("request_id").asText(UUID.randomUUID().toString().replace("-", ""));
        }
        String externalId = (kind == OpenAiRequest.Kind.CHAT ? "chatcmpl-" : "cmpl-") + xrid;
        String internalId = externalId + "-" + String.format("%08x", ThreadLocalRandom.current().nextInt());
        // a decode that falls back to a local prefill is still the decode leg its client asked for
        Leg leg = remotePrefill ? Leg.DECODE : remoteDecode ? Leg.PREFILL : Leg.NONE;
        Call call = new Call(rc, req, externalId, internalId, leg);
        if (remotePrefill) {
            if (VllmDecodeLeg.complete(ktp)) {
                decodeLeg.start(call, (ObjectNode) ktp);
                return;
            }
            // "Got invalid KVTransferParams ... This request will not utilize KVTransfer": silent local prefill
            stats.inc(EngineStats.LOCAL_PREFILL_FALLBACKS);
        }
        if (remoteDecode) {
            prefillLeg(call);
        } else {
            local(call);
        }
    }

    private OpenAiRequest validate(OpenAiRequest.Kind kind, ObjectNode body) {
        String model = body.path("model").asText(null);
        if (model != null && !model.equals(config.model)) {
            throw new Reject(404, "The model `" + model + "` does not exist.");
        }
        OpenAiRequest req = OpenAiRequest.parse(kind, body, 16, -1);
        if (req.streamOptionsGiven && !req.stream) {
            throw Reject.badRequest("Stream options can only be defined when `stream=True`.");
        }
        int max = effectiveMaxTokens(req);
        if (req.minTokens > max) {
            throw Reject.badRequest("min_tokens must be less than or equal to max_tokens=" + max + ", got "
                + req.minTokens + ".");
        }
        checkFits(req.promptIds.length, max);
        return req;
    }

    int effectiveMaxTokens(OpenAiRequest req) {
        return req.maxTokens >= 0 ? req.maxTokens : Math.max(1, config.maxModelLen - req.promptIds.length);
    }

    /** Everything a leg needs about its client request. */
    static final class Call {
        final RoutingContext rc;
        final OpenAiRequest req;
        final String externalId;
        final String internalId;
        final Leg leg;
        final long created = System.currentTimeMillis() / 1000;

        Call(RoutingContext rc, OpenAiRequest req, String externalId, String internalId, Leg leg) {
            this.rc = rc;
            this.req = req;
            this.externalId = externalId;
            this.internalId = internalId;
            this.leg = leg;
        }
    }

    /** An aggregated request (or a decode that prefills locally). */
    void local(Call call) {
        Job job = job(call);
        SseWriter w = openStream(call);
        int max = effectiveMaxTokens(call.req);
        scheduler.submit(job, blocksFor(call.req.promptIds.length, max), j -> j.timer(vertx,
            prefillMs(call.req.promptIds),
            () -> generate(call, j, w, OutputModel.fingerprint(call.req.promptIds), null)));
    }

    SseWriter openStream(Call call) {
        if (!call.req.stream) {
            return null;
        }
        SseWriter w = sse(call.rc);
        w.open();
        return w;
    }

    /** Runs the model from KV with fingerprint {@code seed} and answers; the job ends with the answer. */
    void generate(Call call, Job job, SseWriter w, long seed, ObjectNode kvParamsOut) {
        OpenAiRequest req = call.req;
        Generation g = Generation.run(seed, OutputModel.eosIndex(req.promptIds), null, effectiveMaxTokens(req),
            req.minTokens, req.ignoreEos, req.stop);
        answer(call, job, w, g, kvParamsOut);
    }

    void answer(Call call, Job job, SseWriter w, Generation g, ObjectNode kvParamsOut) {
        ObjectNode usage = OpenAiWire.usage(call.req.promptIds.length, g.size(), null);
        if (w != null) {
            emit(job, w, wire.streamEvents(call.req, call.externalId, call.created, config.model, g, usage),
                OpenAiWire.firstTokenEvent(call.req, g), () -> finish(job));
            return;
        }
        ObjectNode resp = wire.response(call.req, call.externalId, call.created, config.model, g,
            call.req.promptIds.length, usage);
        if (kvParamsOut == null) {
            resp.putNull("kv_transfer_params");
        } else {
            resp.set("kv_transfer_params", kvParamsOut);
        }
        afterDecoding(job, g.size(), () -> {
            finish(job);
            respondLater(() -> Http.json(call.rc.response(), 200, resp));
        });
    }

    /** Fails a request the way vLLM reports a KV load failure: a generic 500, or an error event in a stream. */
    void failRequest(Call call, Job job, SseWriter w, String message) {
        if (w != null) {
            w.event(Http.write(error(500, message)));
            w.done();
        } else {
            Http.json(call.rc.response(), 500, error(500, message));
        }
        fail(job);
    }

    // ------------------------------------------------------------------ prefill leg

    private void prefillLeg(Call call) {
        Job job = job(call);
        SseWriter w = openStream(call);
        int max = effectiveMaxTokens(call.req);
        int promptBlocks = pool.blocksFor(call.req.promptIds.length);
        long fingerprint = OutputModel.fingerprint(call.req.promptIds);
        scheduler.submit(job, blocksFor(call.req.promptIds.length, max), j -> {
            KvHold hold = holds.pin(call.internalId, "prefill", j.takeBlocks(promptBlocks), 0,
                h -> stats.inc(EXPIRED_REQS));
            hold.attach(new Parked(fingerprint, call.req.promptIds.length));
            // abort before the prefill finished: the request is not LENGTH_CAPPED, blocks are freed at once
            j.onAbort(() -> holds.release(call.internalId, FreeReason.ABORT));
            j.timer(vertx, prefillMs(call.req.promptIds), () -> {
                Generation g = Generation.run(fingerprint, OutputModel.eosIndex(call.req.promptIds), null, max,
                    call.req.minTokens, call.req.ignoreEos, call.req.stop);
                boolean delayFree = "length".equals(g.finishReason())
                    || (cfg.mode == VllmConfig.Mode.LEASE && "stop".equals(g.finishReason()));
                ObjectNode params = null;
                if (delayFree) {
                    hold.kind("parked");
                    holds.setTtl(hold, cfg.holdTtlMs());
                    params = paramsFor(hold, call.internalId, call.req.promptIds.length);
                } else {
                    holds.release(call.internalId, FreeReason.FINISHED);
                }
                // from here on the request is finished: a client abort is ignored (vLLM PR #25067)
                answer(call, j, w, g, params);
            });
        });
    }

    private ObjectNode paramsFor(KvHold hold, String internalId, int promptTokens) {
        ObjectNode p = Http.obj();
        p.put("do_remote_prefill", true);
        p.put("do_remote_decode", false);
        if (cfg.mode == VllmConfig.Mode.LEASE) {
            var group = p.putArray("remote_block_ids").addArray();
            for (int b : hold.blocks()) {
                group.add(b);
            }
        } else {
            var ids = p.putArray("remote_block_ids");
            for (int b : hold.blocks()) {
                ids.add(b);
            }
        }
        p.put("remote_engine_id", identity.engineId());
        p.put("remote_request_id", internalId);
        p.put("remote_host", cfg.sideChannelHost);
        p.put("remote_port", sideChannelPort());
        p.put("tp_size", cfg.tpSize);
        if (cfg.mode == VllmConfig.Mode.LEASE) {
            p.put("dcp_size", 1);
            p.put("pp_size", 1);
            p.put("remote_num_tokens", promptTokens);
            p.putNull("remote_blocks_expiry_time");
            p.put("transfer_mode", "pull");
        }
        return p;
    }

    /** What a parked prefill's blocks "contain". */
    static final class Parked {
        final long fingerprint;
        final int numTokens;

        Parked(long fingerprint, int numTokens) {
            this.fingerprint = fingerprint;
            this.numTokens = numTokens;
        }
    }

    // package access for the side channel and the decode leg
    Vertx vx() {
        return vertx;
    }

    HoldTable holdTable() {
        return holds;
    }

    AbortLedger abortLedger() {
        return aborts;
    }

    /** {@link #prefillMs} for the decode leg's recompute after a failed KV load. */
    long recomputeMs(int[] promptIds) {
        return prefillMs(promptIds);
    }

    EngineStats counters() {
        return stats;
    }

    HttpClient peerClient() {
        return peers;
    }

    Scheduler sched() {
        return scheduler;
    }

    /** The job of a client request, marked with the handoff leg it is (a client cancel is counted by phase). */
    Job job(Call call) {
        Job job = newJob(call.internalId, call.rc);
        job.leg(call.leg);
        return job;
    }

    void abortJob(Job j) {
        abort(j);
    }

    PeerCall post(String host, int port, String path, JsonNode body) {
        return PeerCall.post(peers, host, port, path, body);
    }

    int blocks(int prompt, int max) {
        return blocksFor(prompt, max);
    }

    @Override
    protected void familyStats(ObjectNode out) {
        out.put("mode", cfg.mode.name().toLowerCase());
        out.put("hold_ttl_ms", cfg.holdTtlMs());
        for (String k : new String[] {EXPIRED_REQS, FAILED_TRANSFERS, FAILED_NOTIFICATIONS, UNRECOGNIZED_READS,
            HEARTBEATS_SENT, HEARTBEATS_RECEIVED}) {
            out.put(k, stats.get(k));
        }
    }
}
