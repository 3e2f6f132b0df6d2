package io.handoff.simulator.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.SseWriter;
import io.handoff.simulator.openai.OpenAiRequest;
import io.handoff.simulator.openai.OpenAiWire;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** A simulated trtllm-serve worker; see the package documentation for the handoff it imitates. */
public final class TrtllmEngine extends SimEngine {
    static final String TRANSCEIVER = "transceiver";
    static final String TRANSFER_TIMEOUTS = "kv_transfer_timeouts";
    static final String AUTH_REJECTED = "auth_rejected";
    static final String AUTH_UNVERIFIED = "auth_unverified";
    /** Ids below this are the worker-local id space. */
    public static final long MIN_GLOBAL_ID = 1L << 40;

    final TrtllmConfig cfg;
    private final OpenAiWire wire;
    private long localIds;
    /** disagg_request_ids in flight on this worker. */
    private final Set<Long> inFlight = new HashSet<>();
    /** Generation-first contexts waiting for their generation's receiver. */
    private final Map<Long, Call> waitingContexts = new HashMap<>();
    /** Generation-first receivers that arrived before their context. */
    private final Rendezvous receivers = new Rendezvous();

    public TrtllmEngine(TrtllmConfig config) {
        super(config);
        this.cfg = config;
        OpenAiWire.Style s = new OpenAiWire.Style();
        s.nullsInChunks = true;
        this.wire = new OpenAiWire(s);
    }

    @Override
    public Family family() {
        return Family.TRTLLM;
    }

    @Override
    protected Map<String, Integer> auxServers() {
        return Map.of(TRANSCEIVER, cfg.transceiverPort);
    }

    /** {@code tcp://host:port} of this worker's cache transceiver, as /server_info advertises it. */
    public String ctxInfoEndpoint() {
        return "tcp://" + cfg.ctxInfoHost + ":" + auxPort(TRANSCEIVER);
    }

    @Override
    protected void auxRoutes(String name, Router r) {
        r.post("/sim/trtllm/pull").handler(this::servePull);
        r.post("/sim/trtllm/rx_ready").handler(this::receiverReady);
    }

    @Override
    protected void routes(Router r) {
        r.post("/v1/completions").handler(inference(rc -> handle(rc, OpenAiRequest.Kind.COMPLETION)));
        r.post("/v1/chat/completions").handler(inference(rc -> handle(rc, OpenAiRequest.Kind.CHAT)));
        r.get("/health").handler(rc -> {
            int s = faults.healthStatus();
            rc.response().setStatusCode(s > 0 ? s : 200).end();
        });
        r.get("/version").handler(rc -> Http.json(rc.response(), 200, Http.obj().put("version", "1.2.0+sim")));
        r.get("/v1/models").handler(rc -> Http.json(rc.response(), 200, TrtllmDiscovery.models(this)));
        r.get("/server_info").handler(rc -> Http.json(rc.response(), 200, TrtllmDiscovery.serverInfo(this)));
        r.get("/metrics").handler(rc -> Http.json(rc.response(), 200, TrtllmDiscovery.iterationStats(this)));
        r.get("/prometheus/metrics").handler(rc -> Http.text(rc.response(), 200, "text/plain; version=0.0.4",
            TrtllmDiscovery.prometheus(this)));
    }

    @Override
    protected void sendError(RoutingContext rc, int status, String message) {
        Http.json(rc.response(), status, error(status, message));
    }

    static ObjectNode error(int status, String message) {
        String type = status == 400 ? "BadRequestError" : status == 404 ? "NotFoundError"
            : status == 503 ? "ServiceUnavailableError" : "InternalServerError";
        return Http.obj().put("object", "error").put("message", message).put("type", type).putNull("param")
            .put("code", status);
    }

    /** One client request with its parsed disaggregated_params. */
    final class Call {
        final RoutingContext rc;
        final OpenAiRequest req;
        final ObjectNode dp;
        final int[] promptIds;
        final int maxTokens;
        final long id;
        final String responseId = "cmpl-" + UUID.randomUUID().toString().replace("-", "");
        final long created = System.currentTimeMillis() / 1000;
        Job job;
        SseWriter sse;

        Call(RoutingContext rc, OpenAiRequest req, ObjectNode dp, int[] promptIds, int maxTokens, long id) {
            this.rc = rc;
            this.req = req;
            this.dp = dp;
            this.promptIds = promptIds;
            this.maxTokens = maxTokens;
            this.id = id;
        }

        /** A context-only request is the prefill leg, a generation-only one the decode leg. */
        Leg leg() {
            String type = dp == null ? "" : dp.path("request_type").asText("").toLowerCase(Locale.ROOT);
            return type.equals("context_only") ? Leg.PREFILL : type.equals("generation_only") ? Leg.DECODE : Leg.NONE;
        }

        int scheduleStyle() {
            return dp == null ? 0 : dp.path("schedule_style").asInt(0);
        }
    }

    // ------------------------------------------------------------------ dispatch

    private void handle(RoutingContext rc, OpenAiRequest.Kind kind) {
        ObjectNode body = body(rc);
        OpenAiRequest req = OpenAiRequest.parse(kind, body, 16, -1);
        int[] prompt = req.promptIds;
        JsonNode pti = body.get("prompt_token_ids");
        if (kind == OpenAiRequest.Kind.CHAT && pti != null && pti.isArray() && pti.size() > 0) {
            prompt = OpenAiRequest.promptIds(pti); // the generation leg skips the chat template
        }
        int max = req.maxTokens >= 0 ? req.maxTokens : Math.max(1, config.maxModelLen - prompt.length);
        checkFits(prompt.length, max);
        JsonNode dpNode = body.get("disaggregated_params");
        ObjectNode dp = dpNode != null && dpNode.isObject() ? (ObjectNode) dpNode : null;
        String type = dp == null ? null : dp.path("request_type").asText(null);
        if (dp != null && type == null) {
            throw Reject.badRequest("disaggregated_params.request_type is required");
        }
        type = type == null ? "context_and_generation" : type.toLowerCase();
        if (!type.equals("context_only") && !type.equals("generation_only")
            && !type.equals("context_and_generation")) {
            throw Reject.badRequest("Unknown request_type: " + type);
        }
        checkAuth(rc, dp);
        long id = dp == null ? 0 : dp.path("disagg_request_id").asLong(0);
        if (id == 0 && dp != null && type.equals("generation_only")) {
            id = dp.path("ctx_request_id").asLong(0);
        }
        if (id != 0) {
            if (id < MIN_GLOBAL_ID && !cfg.allowLocalDisaggIds) {
                throw Reject.badRequest("disagg_request_id " + id + " is in the worker-local id space; use an id >= "
                    + "2^40 (simulator check)");
            }
            boolean parkedHere = type.equals("context_only") ? holds.get(ctxKey(id)) != null
                : type.equals("generation_only") && holds.get(genKey(id)) != null;
            if (inFlight.contains(id) || parkedHere) {
                throw Reject.badRequest("disagg_request_id " + id + " is already in flight on this worker");
            }
        } else {
            id = ++localIds;
        }
        Call call = new Call(rc, req, dp, prompt, max, id);
        switch (type) {
            case "context_only":
                if (call.scheduleStyle() == 1) {
                    if (dp.path("disagg_request_id").isMissingNode() || dp.get("disagg_request_id").isNull()) {
                        throw Reject.badRequest("generation-first context requests need disagg_request_id");
                    }
                    begin(call);
                    genFirstContext(call);
                } else {
                    begin(call);
                    contextFirstContext(call);
                }
                return;
            case "generation_only":
                if (call.scheduleStyle() == 1) {
                    if (!present(dp.get("ctx_info_endpoint"))) {
                        throw Reject.badRequest("generation-first requests need ctx_info_endpoint");
                    }
                    begin(call);
                    genFirstGeneration(call);
                } else {
                    for (String k : new String[] {"ctx_request_id", "encoded_opaque_state", "first_gen_tokens"}) {
                        if (!present(dp.get(k))) {
                            throw Reject.badRequest("generation_only request needs disaggregated_params." + k);
                        }
                    }
                    begin(call);
                    contextFirstGeneration(call);
                }
                return;
            default:
                begin(call);
                aggregated(call);
        }
    }

    private static boolean present(JsonNode v) {
        return v != null && !v.isNull();
    }

    private void checkAuth(RoutingContext rc, ObjectNode dp) {
        if (!DisaggAuth.protectedFields(dp)) {
            return;
        }
        if (cfg.authKey == null) {
            if (cfg.requireAuthKey) {
                stats.inc(AUTH_REJECTED);
                throw Reject.badRequest(
                    "Protected disaggregated request fields require authenticated disaggregated request forwarding");
            }
            stats.inc(AUTH_UNVERIFIED); // FutureWarning: the requirement will be enforced in a future release
            return;
        }
        if (!DisaggAuth.verify(cfg.authKey, dp, rc.request().getHeader(DisaggAuth.HEADER))) {
            stats.inc(AUTH_REJECTED);
            throw Reject.badRequest("Invalid internal disaggregated request authentication");
        }
    }

    private void begin(Call call) {
        call.job = newJob(String.valueOf(call.id), call.rc);
        call.job.leg(call.leg());
        if (call.dp != null) {
            inFlight.add(call.id);
        }
        if (call.req.stream) {
            call.sse = sse(call.rc);
            call.sse.open();
        }
    }

    private void end(Call call) {
        inFlight.remove(call.id);
    }

    private Generation run(Call call, long seed, Integer first, int max) {
        return Generation.run(seed, OutputModel.eosIndex(call.promptIds), first, max, call.req.minTokens,
            call.req.ignoreEos, call.req.stop);
    }

    /** Answers with a generation; {@code dpOut} goes into choices[0].disaggregated_params. */
    private void answer(Call call, Generation g, ObjectNode dpOut, ObjectNode usage) {
        Job job = call.job;
        if (call.sse != null) {
            emit(job, call.sse, wire.streamEvents(call.req, call.responseId, call.created, config.model, g, usage),
                OpenAiWire.firstTokenEvent(call.req, g), () -> {
                    end(call);
                    finish(job);
                });
            return;
        }
        ObjectNode out = wire.response(call.req, call.responseId, call.created, config.model, g,
            call.promptIds.length, usage);
        ObjectNode choice = (ObjectNode) out.path("choices").get(0);
        choice.putNull("token_ids");
        if (dpOut != null) {
            choice.set("disaggregated_params", dpOut);
            ArrayNode ids = out.putArray("prompt_token_ids");
            for (int id : call.promptIds) {
                ids.add(id);
            }
        }
        afterDecoding(job, g.size(), () -> {
            end(call);
            finish(job);
            respondLater(() -> Http.json(call.rc.response(), 200, out));
        });
    }

    private void failCall(Call call, int status, String message) {
        if (call.sse != null) {
            call.sse.event(Http.write(error(status, message)));
            call.sse.done();
        } else {
            Http.json(call.rc.response(), status, error(status, message));
        }
        end(call);
        fail(call.job);
    }

    private void aggregated(Call call) {
        call.job.onAbort(() -> end(call));
        scheduler.submit(call.job, blocksFor(call.promptIds.length, call.maxTokens), j -> j.timer(vertx,
            prefillMs(call.promptIds), () -> answer(call, run(call, OutputModel.fingerprint(call.promptIds), null,
                call.maxTokens), null, OpenAiWire.usage(call.promptIds.length, 0, null))));
    }

    // ------------------------------------------------------------------ context legs

    private static String ctxKey(long id) {
        return "ctx:" + id;
    }

    private static String genKey(long id) {
        return "gen:" + id;
    }

    /** What a parked context's KV "contains". */
    private static final class Parked {
        final long fingerprint;
        final int firstToken;

        Parked(long fingerprint, int firstToken) {
            this.fingerprint = fingerprint;
            this.firstToken = firstToken;
        }
    }

    private void contextFirstContext(Call call) {
        String key = ctxKey(call.id);
        call.job.onAbort(() -> {
            holds.release(key, FreeReason.ABORT);
            end(call);
        });
        scheduler.submit(call.job, blocksFor(call.promptIds.length, 1), j -> {
            KvHold hold = holds.pin(key, "prefill", j.takeBlocks(pool.blocksFor(call.promptIds.length)), 0,
                h -> stats.inc(TRANSFER_TIMEOUTS));
            j.timer(vertx, prefillMs(call.promptIds), () -> {
                Generation first = firstToken(call);
                hold.attach(new Parked(OutputModel.fingerprint(call.promptIds), first.size() > 0 ? first.id(0) : 0));
                hold.kind("parked");
                // the timer starts once the prefill finished and the send began (respond_and_send_async); even a
                // context that ended on EOS stays parked: there is no release call
                holds.setTtl(hold, cfg.kvTransferTimeoutMs);
                answerContext(call, first, 0);
            });
        });
    }

    private Generation firstToken(Call call) {
        return run(call, OutputModel.fingerprint(call.promptIds), null, Math.min(1, call.maxTokens));
    }

    private void answerContext(Call call, Generation first, int style) {
        ObjectNode dp = Http.obj();
        dp.put("request_type", "context_only");
        ArrayNode fgt = dp.putArray("first_gen_tokens");
        for (int id : first.ids()) {
            fgt.add(id);
        }
        dp.put("ctx_request_id", call.id);
        dp.put("encoded_opaque_state", opaqueState(call.id));
        dp.putNull("draft_tokens");
        dp.put("disagg_request_id", call.id);
        dp.put("ctx_dp_rank", 0);
        dp.putNull("ctx_info_endpoint");
        dp.put("schedule_style", style);
        ObjectNode usage = OpenAiWire.usage(call.promptIds.length, first.size(), 0);
        answer(call, first, dp, usage);
    }

    private String opaqueState(long id) {
        ObjectNode s = Http.obj().put("instance", identity.instanceId()).put("host", cfg.ctxInfoHost)
            .put("port", auxPort(TRANSCEIVER)).put("ctx_request_id", id);
        return Base64.getEncoder().encodeToString(Http.write(s).getBytes(StandardCharsets.UTF_8));
    }

    /** The transceiver: a context-first generation pulls a parked context. */
    private void servePull(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        String key = ctxKey(b.path("ctx_request_id").asLong());
        KvHold h = holds.get(key);
        if (!identity.instanceId().equals(b.path("instance").asText()) || h == null || !"parked".equals(h.kind())) {
            Http.json(rc.response(), 404, Http.obj().put("status", "unknown"));
            return;
        }
        vertx.setTimer(Math.max(1, config.transferLatencyMs), t -> {
            KvHold still = holds.get(key);
            if (still == null) {
                Http.json(rc.response(), 404, Http.obj().put("status", "unknown"));
                return;
            }
            Parked p = still.attachment();
            holds.release(key, FreeReason.PULL);
            Http.json(rc.response(), 200, Http.obj().put("status", "ok").put("kv_fingerprint", p.fingerprint)
                .put("first_token", p.firstToken));
        });
    }

    private void genFirstContext(Call call) {
        String key = ctxKey(call.id);
        call.job.onAbort(() -> {
            holds.release(key, FreeReason.ABORT);
            waitingContexts.remove(call.id, call);
            end(call);
        });
        scheduler.submit(call.job, blocksFor(call.promptIds.length, 1), j -> {
            // DISAGG_CONTEXT_WAIT_SCHEDULER: wait for the generation's receiver
            holds.pin(key, "waiting_for_generation", j.takeBlocks(pool.blocksFor(call.promptIds.length)),
                cfg.kvTransferTimeoutMs, h -> {
                    stats.inc(TRANSFER_TIMEOUTS);
                    waitingContexts.remove(call.id, call);
                    failCall(call, 500, "Terminating context request " + call.id
                        + " due to KV cache transfer timeout");
                });
            Rendezvous.Waiter w = receivers.take("rx:" + call.id);
            if (w != null) {
                push(call, w);
            } else {
                waitingContexts.put(call.id, call);
            }
        });
    }

    /** The transceiver: a generation-first generation announces its receiver. */
    private void receiverReady(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        long id = b.path("disagg_request_id").asLong();
        Rendezvous.Waiter w = receivers.register("rx:" + id, rc, b);
        Call ctx = waitingContexts.remove(id);
        if (ctx != null) {
            receivers.take("rx:" + id);
            push(ctx, w);
        }
    }

    private void push(Call call, Rendezvous.Waiter w) {
        String key = ctxKey(call.id);
        KvHold h = holds.get(key);
        h.kind("transferring");
        holds.setTtl(h, cfg.kvTransferTimeoutMs);
        call.job.timer(vertx, prefillMs(call.promptIds) + config.transferLatencyMs, () -> {
            Generation first = firstToken(call);
            if (!w.isOpen()) {
                holds.release(key, FreeReason.FAILURE);
                failCall(call, 500, "KV cache transfer to the generation server failed");
                return;
            }
            holds.release(key, FreeReason.PULL);
            ObjectNode kv = Http.obj().put("status", "ok").put("kv_fingerprint",
                OutputModel.fingerprint(call.promptIds));
            if (first.size() > 0) {
                kv.put("first_token", first.id(0));
            }
            w.respond(200, kv);
            answerContext(call, first, 1);
        });
    }

    // ------------------------------------------------------------------ generation legs

    private void contextFirstGeneration(Call call) {
        JsonNode state;
        try {
            state = Http.parse(new String(Base64.getDecoder().decode(call.dp.get("encoded_opaque_state").asText()),
                StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            end(call);
            fail(call.job);
            throw Reject.badRequest("encoded_opaque_state is not a valid transceiver state");
        }
        int first = call.dp.get("first_gen_tokens").path(0).asInt();
        ObjectNode pull = Http.obj().put("ctx_request_id", call.dp.get("ctx_request_id").asLong())
            .put("instance", state.path("instance").asText());
        receive(call, state.path("host").asText(), state.path("port").asInt(), "/sim/trtllm/pull", pull, first);
    }

    private void genFirstGeneration(Call call) {
        JsonNode ep = call.dp.get("ctx_info_endpoint");
        String endpoint = ep.isArray() ? ep.path(0).asText() : ep.asText();
        String hostPort = endpoint.replaceFirst("^[a-z]+://", "");
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            end(call);
            fail(call.job);
            throw Reject.badRequest("ctx_info_endpoint must be tcp://host:port");
        }
        ObjectNode hello = Http.obj().put("disagg_request_id", call.id).put("gen_instance", identity.instanceId());
        receive(call, hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)),
            "/sim/trtllm/rx_ready", hello, null);
    }

    /**
     * Allocates the destination KV and receives from the context. A failed or refused receive is not reported: the
     * request waits for kv_transfer_timeout_ms (forever without one), as a real receiver blocks in its transfer.
     */
    private void receive(Call call, String host, int port, String path, ObjectNode msg, Integer firstToken) {
        String key = genKey(call.id);
        PeerCall[] holder = new PeerCall[1];
        call.job.onAbort(() -> {
            holds.release(key, FreeReason.ABORT);
            if (holder[0] != null) {
                holder[0].cancel();
            }
            end(call);
        });
        scheduler.submit(call.job, blocksFor(call.promptIds.length, call.maxTokens), j -> {
            holds.pin(key, "receiving", j.takeBlocks(pool.blocksFor(call.promptIds.length)), cfg.kvTransferTimeoutMs,
                h -> {
                    stats.inc(TRANSFER_TIMEOUTS);
                    if (holder[0] != null) {
                        holder[0].cancel();
                    }
                    failCall(call, 500, "Terminating generation request " + call.id
                        + " due to KV cache transfer timeout");
                });
            holder[0] = PeerCall.post(peers, host, port, path, msg);
            holder[0].result().onComplete(ar -> {
                if (j.isAborted() || j.isDone() || ar.failed() || ar.result().status != 200) {
                    return;
                }
                holds.release(key, FreeReason.RECEIVED);
                JsonNode kv = ar.result().body;
                Integer first = firstToken != null ? firstToken
                    : kv.has("first_token") ? Integer.valueOf(kv.get("first_token").asInt()) : null;
                Generation g = run(call, kv.path("kv_fingerprint").asLong(), first, call.maxTokens);
                JsonNode ctxUsage = call.dp.get("ctx_usage");
                int promptTokens = ctxUsage != null && ctxUsage.has("prompt_tokens")
                    ? ctxUsage.get("prompt_tokens").asInt() : call.promptIds.length;
                answer(call, g, null, OpenAiWire.usage(promptTokens, g.size(), null));
            });
        });
    }

    @Override
    protected void onCrash() {
        inFlight.clear();
        waitingContexts.clear();
        receivers.clear();
    }

    @Override
    protected void familyStats(ObjectNode out) {
        out.put("kv_transfer_timeout_ms", cfg.kvTransferTimeoutMs);
        out.put("ctx_info_endpoint", ctxInfoEndpoint());
        out.put("contexts_waiting_for_generation", waitingContexts.size());
        out.put("receivers_waiting_for_context", receivers.size());
        for (String k : new String[] {TRANSFER_TIMEOUTS, AUTH_REJECTED, AUTH_UNVERIFIED}) {
            out.put(k, stats.get(k));
        }
    }
}
