package io.handoff.simulator.openengine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.KvEndpoint;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import io.handoff.simulator.EngineStats;
import io.handoff.simulator.Family;
import io.handoff.simulator.FreeReason;
import io.handoff.simulator.Http;
import io.handoff.simulator.Job;
import io.handoff.simulator.KvHold;
import io.handoff.simulator.Leg;
import io.handoff.simulator.OutputModel;
import io.handoff.simulator.PeerCall;
import io.handoff.simulator.Reject;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimEngine;
import io.netty.channel.ChannelOption;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** A simulated openengine.v1 gRPC engine; see the package documentation for the flow it imitates. */
public final class OpenEngineSimEngine extends SimEngine {
    static final String KV_TRANSFER = "kv_transfer";
    static final String PULL_PATH = "/sim/openengine/pull";
    static final String TRANSFER_PROTOCOL = "sim-http";
    /** Family counters in {@code /sim/stats}. */
    public static final String SESSIONS_MINTED = "kv_sessions_minted";
    public static final String SESSIONS_EXPIRED = "kv_sessions_expired";
    public static final String SESSION_NOT_FOUND = "kv_session_not_found";
    public static final String LOCAL_PREFILLS = "local_prefills";
    public static final String ABORT_RPCS = "abort_rpcs";
    /** How many finished request ids the engine remembers, so a late Abort answers ALREADY_FINISHED. */
    private static final int FINISHED_MEMORY = 10_000;

    final OpenEngineConfig cfg;
    private final Map<String, GenerateCall> active = new HashMap<>();
    private final Map<String, Boolean> finished = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > FINISHED_MEMORY;
        }
    };
    private volatile Server grpc;
    /** A server stopped by a crash, whose port a restart must wait for: shutdownNow releases it asynchronously. */
    private volatile Server stopping;
    private volatile int grpcPort;
    private long mintedRequestIds;

    public OpenEngineSimEngine(OpenEngineConfig config) {
        super(config);
        this.cfg = config;
    }

    @Override
    public Family family() {
        return Family.OPENENGINE;
    }

    /** The bound gRPC port (stable across restarts). */
    public int grpcPort() {
        return grpcPort;
    }

    /** {@code grpc://host:port}, the form Handoff routes name gRPC endpoints in. */
    public String grpcTarget() {
        return "grpc://" + config.host + ":" + grpcPort;
    }

    /** Parked (pulled-for-nothing-yet) sessions and the KV blocks they pin, for tests. */
    public int parkedSessions() {
        return onContext(() -> (int) holds.all().stream().filter(h -> "parked".equals(h.kind())).count());
    }

    // ------------------------------------------------------------------ servers

    @Override
    protected Map<String, Integer> auxServers() {
        return Map.of(KV_TRANSFER, cfg.kvTransferPort);
    }

    @Override
    protected void auxRoutes(String name, Router r) {
        r.post(PULL_PATH).handler(this::servePull);
    }

    @Override
    protected void routes(Router r) {
        // everything native is gRPC; the HTTP port carries the shared /sim/* admin only
    }

    @Override
    protected void sendError(RoutingContext rc, int status, String message) {
        Http.json(rc.response(), status, Http.obj().put("error", message));
    }

    @Override
    protected Future<Void> listenExtra() {
        int port = grpcPort != 0 ? grpcPort : cfg.grpcPort;
        // binding is a blocking socket call: keep it off the event loop
        return vertx.executeBlocking(() -> {
            Server old = stopping;
            if (old != null) {
                old.awaitTermination(5, TimeUnit.SECONDS);
                stopping = null;
            }
            Server s = NettyServerBuilder.forAddress(new InetSocketAddress(config.host, port))
                .withOption(ChannelOption.SO_REUSEADDR, true).directExecutor()
                .addService(ServerInterceptors.intercept(new InferenceService(this), InferenceService.TRACE_CONTEXT)).addService(new ControlService(this)).build().start();
            grpc = s;
            grpcPort = s.getPort();
            return null;
        }, false);
    }

    @Override
    protected void onCrash() {
        // a dead process: every open stream breaks with a transport error, never with an EngineError
        for (GenerateCall c : new ArrayList<>(active.values())) {
            if (c.pull != null) {
                c.pull.cancel();
            }
            c.fail(Status.UNAVAILABLE.withDescription("engine process died"));
        }
        active.clear();
        stopGrpc();
    }

    @Override
    public void stop(Promise<Void> stopPromise) {
        stopGrpc();
        super.stop(stopPromise);
    }

    private void stopGrpc() {
        Server s = grpc;
        grpc = null;
        if (s != null) {
            s.shutdownNow();
            stopping = s;
        }
    }

    @Override
    protected void familyStats(ObjectNode out) {
        out.put("grpc_port", grpcPort);
        out.put("kv_session_timeout_ms", cfg.kvSessionTimeoutMs);
        out.put("abort_cleanup", cfg.abortCleanup);
        out.put("active_calls", active.size());
    }

    void onLoop(Runnable r) {
        context.runOnContext(v -> r.run());
    }

    GenerateCall newCall(ServerCallStreamObserver<GenerateResponse> out) {
        return new GenerateCall(out, faults.takeCut(), () -> stats.inc(EngineStats.FAULT_CUTS));
    }

    // ------------------------------------------------------------------ Generate

    void generate(GenerateRequest request, GenerateCall call, String traceParent) {
        stats.inc(EngineStats.REQUESTS_TOTAL);
        receivedTraceParent(traceParent);
        if (faults.takeReset()) {
            stats.inc(EngineStats.FAULT_RESETS);
            call.fail(Status.UNAVAILABLE.withDescription("simulated connection reset"));
            return;
        }
        int err = faults.takeError();
        if (err > 0) {
            stats.inc(EngineStats.FAULT_ERRORS);
            stats.inc(EngineStats.REQUESTS_FAILED);
            call.fail(FaultStatus.fromHttp(err).withDescription(faults.errorMessage(err)));
            return;
        }
        long latency = faults.latencyMs();
        if (latency > 0) {
            vertx.setTimer(latency, t -> {
                if (isUp() && !call.isClosed()) {
                    admit(request, call);
                }
            });
        } else {
            admit(request, call);
        }
    }

    /** Validation (failures are gRPC statuses: nothing was accepted), then the flow for the request's kind. */
    private void admit(GenerateRequest request, GenerateCall call) {
        ParsedRequest r;
        try {
            r = ParsedRequest.parse(request, "oe-req-" + (++mintedRequestIds), cfg);
            if (!request.getModel().isEmpty() && !request.getModel().equals(config.model)) {
                throw Status.NOT_FOUND.withDescription("model " + request.getModel() + " is not served here")
                    .asRuntimeException();
            }
            if (r.session != null && config.role == Role.PREFILL) {
                throw Status.FAILED_PRECONDITION.withDescription("ROLE_MISMATCH: a prefill engine does not take "
                    + "kv.session").asRuntimeException();
            }
            if (active.containsKey(r.requestId)) {
                throw Status.ALREADY_EXISTS.withDescription("request " + r.requestId + " is already running")
                    .asRuntimeException();
            }
            checkFits(r.promptIds.length, r.maxTokens);
        } catch (StatusRuntimeException e) {
            stats.inc(EngineStats.REQUESTS_FAILED);
            call.fail(e.getStatus());
            return;
        } catch (Reject e) {
            stats.inc(EngineStats.REQUESTS_FAILED);
            call.fail(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
            return;
        }
        call.request = r;
        call.job = newJob(r.requestId, null);
        call.job.leg(r.session != null ? Leg.DECODE : config.role == Role.PREFILL ? Leg.PREFILL : Leg.NONE);
        active.put(r.requestId, call);
        if (r.session != null) {
            decodeFromSession(call);
        } else if (config.role == Role.PREFILL) {
            prefill(call);
        } else {
            generateLocally(call);
        }
    }

    private static String holdKey(String sessionId) {
        return "kv:" + sessionId;
    }

    /** The request left the engine: it is no longer abortable, and a late Abort hears ALREADY_FINISHED. */
    private void retire(GenerateCall call) {
        if (call.request != null) {
            active.remove(call.request.requestId, call);
            finished.put(call.request.requestId, Boolean.TRUE);
        }
    }

    /** Prefill role: pin the prompt's KV under an engine-minted session and end with exactly one PrefillReady. */
    private void prefill(GenerateCall call) {
        ParsedRequest r = call.request;
        Job job = call.job;
        String sid = "oe-kv-" + UUID.randomUUID();
        String key = holdKey(sid);
        call.sessionId = sid;
        int blocks = pool.blocksFor(r.promptIds.length);
        job.onAbort(() -> holds.release(key, FreeReason.ABORT));
        scheduler.submit(job, blocks, j -> {
            KvHold hold = holds.pin(key, "prefill", j.takeBlocks(blocks), 0, h -> stats.inc(SESSIONS_EXPIRED));
            hold.attach(new ParkedKv(OutputModel.fingerprint(r.promptIds), r.promptIds.length));
            j.timer(vertx, prefillMs(r.promptIds), () -> {
                hold.kind("parked");
                // the engine-owned lifetime starts when the prefill is done; nothing can renew or release it
                holds.setTtl(hold, cfg.kvSessionTimeoutMs);
                stats.inc(SESSIONS_MINTED);
                finish(j);
                retire(call);
                GenerateResponse ready = WireEvents.prefillReady(r.requestId, sessionRef(sid, hold));
                respondLater(() -> {
                    if (call.send(ready)) {
                        call.complete();
                    }
                });
            });
        });
    }

    private KvSessionRef sessionRef(String sid, KvHold hold) {
        ListValue.Builder ids = ListValue.newBuilder();
        for (int b : hold.blocks()) {
            ids.addValues(Value.newBuilder().setNumberValue(b));
        }
        ParkedKv p = hold.attachment();
        Struct attrs = Struct.newBuilder()
            .putFields("instance_id", Value.newBuilder().setStringValue(identity().instanceId()).build())
            .putFields("prompt_tokens", Value.newBuilder().setNumberValue(p.promptTokens).build())
            .putFields("block_ids", Value.newBuilder().setListValue(ids).build())
            .putFields("timeout_ms", Value.newBuilder().setNumberValue(cfg.kvSessionTimeoutMs).build()).build();
        return KvSessionRef.newBuilder().setSessionId(sid).setTransferBackend(TRANSFER_PROTOCOL)
            .addEndpoints(KvEndpoint.newBuilder().setHost(cfg.transferHost()).setPort(auxPort(KV_TRANSFER))
                .setProtocol(TRANSFER_PROTOCOL))
            .setDpRank(0).setAttributesStruct(attrs).build();
    }

    /** Decode with kv.session: pull the parked KV from its producer, then stream from it. */
    private void decodeFromSession(GenerateCall call) {
        ParsedRequest r = call.request;
        Job job = call.job;
        call.sessionId = r.session.getSessionId();
        job.onAbort(() -> {
            if (call.pull != null) {
                call.pull.cancel();
            }
        });
        scheduler.submit(job, blocksFor(r.promptIds.length, r.maxTokens * r.sequences), j -> {
            KvEndpoint ep = r.session.getEndpointsList().stream()
                .filter(e -> TRANSFER_PROTOCOL.equals(e.getProtocol())).findFirst().orElse(null);
            if (ep == null) {
                failAccepted(call, ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED,
                    "kv.session names no endpoint with protocol " + TRANSFER_PROTOCOL, false);
                return;
            }
            Value instance = r.session.getAttributesStruct().getFieldsMap().get("instance_id");
            ObjectNode body = Http.obj().put("session_id", call.sessionId)
                .put("instance_id", instance == null ? "" : instance.getStringValue());
            call.pull = PeerCall.post(peers, ep.getHost(), ep.getPort(), PULL_PATH, body);
            call.pull.result().onComplete(ar -> {
                if (j.isAborted() || call.isClosed()) {
                    return;
                }
                if (ar.failed()) {
                    failAccepted(call, ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, "KV transfer from " + ep.getHost()
                        + ":" + ep.getPort() + " failed: " + ar.cause().getMessage(), false);
                } else if (ar.result().status == 404) {
                    stats.inc(SESSION_NOT_FOUND);
                    failAccepted(call, ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, "kv session " + call.sessionId
                        + " is unknown to its producer (expired, already pulled, or the producer restarted)", false);
                } else if (ar.result().status != 200) {
                    failAccepted(call, ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED,
                        "KV transfer answered " + ar.result().status, false);
                } else {
                    stats.inc(EngineStats.TRANSFERS_RECEIVED);
                    stream(call, ar.result().body.path("kv_fingerprint").asLong());
                }
            });
        });
    }

    /** No kv.session on a decode or aggregated engine: prefill here, then stream (the bypass path). */
    private void generateLocally(GenerateCall call) {
        ParsedRequest r = call.request;
        stats.inc(LOCAL_PREFILLS);
        scheduler.submit(call.job, blocksFor(r.promptIds.length, r.maxTokens * r.sequences), j -> j.timer(vertx,
            prefillMs(r.promptIds), () -> stream(call, OutputModel.fingerprint(r.promptIds))));
    }

    private void failAccepted(GenerateCall call, ErrorCode code, String message, boolean retryable) {
        fail(call.job);
        retire(call);
        call.failAccepted(code, message, retryable);
    }

    private void stream(GenerateCall call, long seed) {
        ParsedRequest r = call.request;
        List<SequenceOutput> outputs = new ArrayList<>();
        for (int k = 0; k < r.sequences; k++) {
            outputs.add(SequenceOutput.run(r, seed, k));
        }
        call.answer = WireEvents.answer(r.requestId, outputs, r.promptIds.length);
        call.streaming = true;
        emitNext(call);
    }

    /** Sends the answer one TokenOutput per token interval; the last event completes the request. */
    private void emitNext(GenerateCall call) {
        Job job = call.job;
        while (call.nextEvent < call.answer.size()) {
            if (job.isAborted() || call.isClosed()) {
                return;
            }
            GenerateResponse e = call.answer.get(call.nextEvent++);
            boolean last = call.nextEvent == call.answer.size();
            if (last) {
                finish(job);
                retire(call);
            }
            if (!call.send(e)) {
                // the stream broke under the engine (a cut): it drops the request as on a closed connection
                abort(job);
                retire(call);
                return;
            }
            if (e.hasToken()) {
                job.tokenSent();
            }
            if (last) {
                call.complete();
                return;
            }
            if (config.tokenIntervalMs > 0 && e.hasToken()) {
                job.timer(vertx, config.tokenIntervalMs, () -> emitNext(call));
                return;
            }
        }
    }

    /** The client cancelled (or its deadline passed): the transport-level abort. */
    void clientCancelled(GenerateCall call) {
        call.markCancelled();
        if (call.job != null) {
            cancelled(call.job);
            abort(call.job);
            retire(call);
        }
    }

    // ------------------------------------------------------------------ KV transfer (producer side)

    private void servePull(RoutingContext rc) {
        JsonNode b = Http.parse(rc.body().asString());
        String key = holdKey(b.path("session_id").asText());
        String instance = b.path("instance_id").asText("");
        KvHold h = holds.get(key);
        boolean otherInstance = !instance.isEmpty() && !identity().instanceId().equals(instance);
        if (otherInstance || h == null || !"parked".equals(h.kind())) {
            Http.json(rc.response(), 404, Http.obj().put("status", "unknown"));
            return;
        }
        h.kind("pulling"); // a second pull of the same session finds nothing
        vertx.setTimer(Math.max(1, config.transferLatencyMs), t -> {
            KvHold still = holds.get(key);
            if (still == null) {
                Http.json(rc.response(), 404, Http.obj().put("status", "unknown"));
                return;
            }
            ParkedKv p = still.attachment();
            holds.release(key, FreeReason.PULL);
            Http.json(rc.response(), 200, Http.obj().put("status", "ok").put("kv_fingerprint", p.fingerprint));
        });
    }

    // ------------------------------------------------------------------ Control

    ServerInfo serverInfo() {
        return Discovery.serverInfo(cfg, identity().instanceId(), auxPort(KV_TRANSFER));
    }

    ModelInfo modelInfo(String model) {
        if (!model.isEmpty() && !model.equals(config.model)) {
            throw Status.NOT_FOUND.withDescription("model " + model + " is not served here").asRuntimeException();
        }
        return ModelInfo.newBuilder().setModelId(config.model).setServedModelName(config.model)
            .setMaxContextLength(config.maxModelLen).setSupportsTextInput(true).setSupportsTokenIdsInput(true).build();
    }

    LoadInfo load() {
        long parked = holds.all().stream().filter(h -> !"prefill".equals(h.kind())).count();
        return LoadInfo.newBuilder().setInstanceId(identity().instanceId())
            .setTimestampUnixNanos(clock().millis() * 1_000_000L).setRunningRequests(scheduler.running())
            .setQueuedRequests(scheduler.waiting()).setActiveKvSessions((int) parked)
            .setUsedKvBlocks(pool.usedBlocks()).setTotalKvBlocks(pool.totalBlocks()).build();
    }

    HealthResponse health() {
        int s = faults.healthStatus();
        return Discovery.health(s == 0 || s == 200, s == 0 ? "ok" : "health fault " + s);
    }

    AbortResponse abort(AbortRequest request) {
        stats.inc(ABORT_RPCS);
        switch (request.getTargetCase()) {
            case REQUEST_ID:
                aborts.aborted("request " + request.getRequestId());
                return abortRequest(request.getRequestId());
            case KV_SESSION:
                aborts.aborted("kv_session " + request.getKvSession().getSessionId());
                return abortSession(request.getKvSession().getSessionId());
            case ALL_REQUESTS:
                int n = 0;
                for (GenerateCall c : new ArrayList<>(active.values())) {
                    n += abortCall(c) ? 1 : 0;
                }
                return aborted("aborted " + n + " requests");
            default:
                throw Status.INVALID_ARGUMENT.withDescription("Abort needs exactly one target").asRuntimeException();
        }
    }

    private AbortResponse abortRequest(String id) {
        GenerateCall c = active.get(id);
        if (c == null || c.job.isDone()) {
            if (c != null || finished.containsKey(id)) {
                return AbortResponse.newBuilder().setStatus(AbortStatus.ABORT_STATUS_ALREADY_FINISHED).build();
            }
            throw Status.NOT_FOUND.withDescription("no request " + id).asRuntimeException();
        }
        abortCall(c);
        return aborted("aborted " + id);
    }

    /**
     * Aborts the requests producing or pulling the session. Parked KV is freed only with {@code abort-cleanup}:
     * otherwise the engine keeps it until a pull or its timeout, and says so with ALREADY_FINISHED (the request that
     * made it is over; the abort changed nothing).
     */
    private AbortResponse abortSession(String sid) {
        boolean any = false;
        for (GenerateCall c : new ArrayList<>(active.values())) {
            if (sid.equals(c.sessionId)) {
                any |= abortCall(c);
            }
        }
        KvHold h = holds.get(holdKey(sid));
        if (h != null && cfg.abortCleanup) {
            holds.release(holdKey(sid), FreeReason.ABORT);
            return aborted("session " + sid + " freed");
        }
        if (any) {
            return aborted("requests of session " + sid + " aborted");
        }
        if (h != null) {
            return AbortResponse.newBuilder().setStatus(AbortStatus.ABORT_STATUS_ALREADY_FINISHED)
                .setMessage("session " + sid + " is parked and kept until it is pulled or times out "
                    + "(supports_abort_cleanup=false)").build();
        }
        throw Status.NOT_FOUND.withDescription("no kv session " + sid).asRuntimeException();
    }

    private static AbortResponse aborted(String message) {
        return AbortResponse.newBuilder().setStatus(AbortStatus.ABORT_STATUS_ABORTED).setMessage(message).build();
    }

    /**
     * Stops a running request and tells its client how it ended: a streaming request gets GenerationFinished
     * CANCELLED for each unfinished output (Usage on the last); a prefill, which has no output, one terminal
     * EngineError CANCELLED.
     */
    private boolean abortCall(GenerateCall c) {
        if (c.job.isDone() || c.job.isAborted()) {
            return false;
        }
        cancelled(c.job);
        abort(c.job);
        retire(c);
        if (!c.streaming) {
            c.failAccepted(ErrorCode.ERROR_CODE_CANCELLED, "aborted by Control.Abort", false);
            return true;
        }
        BitSet done = new BitSet();
        int tokens = 0;
        for (int i = 0; i < c.nextEvent; i++) {
            GenerateResponse e = c.answer.get(i);
            if (e.hasFinished()) {
                done.set(e.getFinished().getOutputIndex());
            } else if (e.hasToken()) {
                tokens += e.getToken().getTokensCount();
            }
        }
        List<GenerateResponse> tail = new ArrayList<>();
        for (int k = 0; k < c.request.sequences; k++) {
            if (!done.get(k)) {
                tail.add(WireEvents.finished(c.request.requestId, k, FinishReason.FINISH_REASON_CANCELLED, null,
                    "aborted by Control.Abort"));
            }
        }
        if (tail.isEmpty()) {
            c.complete();
            return true;
        }
        int last = tail.size() - 1;
        tail.set(last, tail.get(last).toBuilder()
            .setUsage(WireEvents.usage(c.request.promptIds.length, tokens)).build());
        for (GenerateResponse e : tail) {
            if (!c.send(e)) {
                return true;
            }
        }
        c.complete();
        return true;
    }
}
