package io.handoff.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The common engine: a Vert.x verticle (so all its state lives on one event loop) with an HTTP server for the native
 * API, optional auxiliary servers (vLLM NIXL side channel, SGLang bootstrap server, TRT-LLM transceiver), a KV pool,
 * a hold table, an admission scheduler, faults, stats and the {@code /sim/*} admin endpoints.
 *
 * <p>Thread-safety: the public Java API may be called from any thread; it hops onto the engine's event loop.
 */
public abstract class SimEngine extends AbstractVerticle {
    /** The W3C trace context header (and gRPC metadata key) a caller's trace arrives in. */
    public static final String TRACEPARENT = "traceparent";
    /** How many inference requests' trace contexts {@link #receivedTraceParents()} keeps. */
    public static final int TRACE_PARENTS_KEPT = 256;
    protected final EngineConfig config;
    protected final SimClock clock;
    protected final Faults faults = new Faults();
    protected final EngineStats stats = new EngineStats();
    /** Native aborts per id, to find a KV discharged twice. */
    protected final AbortLedger aborts;
    protected KvBlockPool pool;
    protected HoldTable holds;
    protected Scheduler scheduler;
    private PrefixCache prefixCache;
    protected HttpClient peers;
    protected volatile Identity identity;
    protected final Set<Job> jobs = new LinkedHashSet<>();
    /** The W3C trace context of the latest inference requests, oldest first. Guarded by the event loop. */
    private final ArrayDeque<String> traceParents = new ArrayDeque<>();

    private final Map<String, Integer> auxPorts = new ConcurrentHashMap<>();
    private final List<HttpServer> servers = new ArrayList<>();
    private volatile int boundPort;
    private volatile boolean up;
    /** The crash's closing of the listeners: a restart binds the same ports only once it has completed. */
    private Future<Void> closing = Future.succeededFuture();
    private Context ctx;
    private volatile Thread loopThread;
    private final Runnable clockListener = () -> {
        Context c = ctx;
        if (c != null) {
            c.runOnContext(v -> {
                if (up) {
                    holds.sweep();
                }
            });
        }
    };

    protected SimEngine(EngineConfig config) {
        this.config = config;
        this.clock = config.clock != null ? config.clock : new SimClock();
        this.aborts = new AbortLedger(clock, stats);
    }

    /** Which family this engine imitates. */
    public abstract Family family();

    /** Installs the native routes. */
    protected abstract void routes(Router router);

    /** Sends an error in the family's native error shape. */
    protected abstract void sendError(RoutingContext rc, int status, String message);

    /** Auxiliary servers: name to configured port (0: any free port). Their routes come from {@link #auxRoutes}. */
    protected Map<String, Integer> auxServers() {
        return Map.of();
    }

    /** Installs the routes of one auxiliary server. */
    protected void auxRoutes(String name, Router router) {
    }

    /** Adds family-specific fields to {@code /sim/stats}. */
    protected void familyStats(ObjectNode out) {
    }

    /**
     * Starts listeners that are not Vert.x HTTP servers (the openengine family's gRPC server), after the HTTP ones, at
     * start and again after a restart. A family stops them in {@link #onCrash()} and in {@code stop}.
     */
    protected Future<Void> listenExtra() {
        return Future.succeededFuture();
    }

    /** Forgets family state when the process "dies". Holds, jobs and the pool are already dropped. */
    protected void onCrash() {
    }

    // ------------------------------------------------------------------ lifecycle

    /** Deploys the engine on {@code vertx} and waits until it listens. */
    public <E extends SimEngine> E startBlocking(Vertx vertx) {
        await(vertx.deployVerticle(this));
        @SuppressWarnings("unchecked")
        E self = (E) this;
        return self;
    }

    /** Undeploys the engine (closes its servers) and waits. */
    public void stopBlocking() {
        if (deploymentID() != null && vertx != null) {
            await(vertx.undeploy(deploymentID()));
        }
    }

    @Override
    public void start(Promise<Void> startPromise) {
        ctx = context;
        loopThread = Thread.currentThread();
        pool = new KvBlockPool(config.totalBlocks, config.blockSize);
        holds = new HoldTable(vertx, clock, pool, stats, faults);
        scheduler = new Scheduler(pool, config.maxRunning);
        prefixCache = new PrefixCache(config.blockSize, config.prefixCacheBlocks == -1 ? config.totalBlocks
            : config.prefixCacheBlocks);
        holds.onFreed(scheduler::drain);
        peers = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(2000).setMaxPoolSize(256)
            .setKeepAlive(true).setTcpNoDelay(true));
        identity = Identity.first(config.fixedEngineId, clock.millis());
        clock.addAdvanceListener(clockListener);
        auxPorts.putAll(auxServers());
        listen().compose(v -> listenExtra()).onComplete(ar -> {
            if (ar.succeeded()) {
                up = true;
                startPromise.complete();
            } else {
                startPromise.fail(ar.cause());
            }
        });
    }

    @Override
    public void stop(Promise<Void> stopPromise) {
        clock.removeAdvanceListener(clockListener);
        up = false;
        closeServers().onComplete(ar -> {
            peers.close();
            stopPromise.complete();
        });
    }

    private Future<Void> listen() {
        List<Future<?>> auxListens = new ArrayList<>();
        for (Map.Entry<String, Integer> e : auxPorts.entrySet()) {
            Router r = Router.router(vertx);
            r.route().handler(BodyHandler.create(false));
            auxRoutes(e.getKey(), r);
            String name = e.getKey();
            auxListens.add(vertx.createHttpServer(serverOptions(e.getValue())).requestHandler(r).listen()
                .onSuccess(s -> {
                    servers.add(s);
                    auxPorts.put(name, s.actualPort());
                }));
        }
        return Future.all(auxListens).compose(v -> {
            Router r = buildRouter();
            return vertx.createHttpServer(serverOptions(boundPort != 0 ? boundPort : config.port)).requestHandler(r)
                .listen();
        }).map(s -> {
            servers.add(s);
            boundPort = s.actualPort();
            return null;
        });
    }

    private HttpServerOptions serverOptions(int port) {
        return new HttpServerOptions().setHost(config.host).setPort(port).setTcpNoDelay(true).setReuseAddress(true)
            .setIdleTimeout(0);
    }

    private Future<Void> closeServers() {
        List<Future<?>> closes = new ArrayList<>();
        for (HttpServer s : servers) {
            closes.add(s.close());
        }
        servers.clear();
        return Future.all(closes).mapEmpty();
    }

    /**
     * Simulates a process crash: every connection is dropped, the servers stop listening, all pinned KV is lost
     * (counted in {@code kv_blocks_lost_by_crash}, never as freed). With {@code restartAfterMs >= 0} the engine comes
     * back on the same ports with a new identity after that delay.
     */
    public void crash(long restartAfterMs) {
        onContext(() -> {
            crashNow(restartAfterMs);
            return null;
        });
    }

    /** Crash from the event loop (e.g. SGLang's duplicate-room scheduler crash). */
    protected void crashNow(long restartAfterMs) {
        if (!up) {
            return;
        }
        up = false;
        stats.inc(EngineStats.CRASHES);
        for (Job j : new ArrayList<>(jobs)) {
            j.aborted = true;
            j.cancelTimers(vertx);
            if (j.rc() != null && !j.rc().response().closed()) {
                Http.reset(j.rc().request());
            }
        }
        jobs.clear();
        scheduler.reset();
        stats.add(EngineStats.LOST_BY_CRASH, holds.dropAll());
        pool.reset();
        prefixCache.clear();
        onCrash();
        closing = closeServers();
        closing.onComplete(v -> {
            if (restartAfterMs >= 0) {
                vertx.setTimer(Math.max(1, restartAfterMs), t -> restartNow());
            }
        });
    }

    /** Brings a crashed engine back on the same ports with a new identity; waits until it listens. */
    public void restart() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ctx.runOnContext(v -> restartNow().onComplete(ar -> {
            if (ar.succeeded()) {
                done.complete(null);
            } else {
                done.completeExceptionally(ar.cause());
            }
        }));
        join(done);
    }

    private Future<Void> restartNow() {
        if (up) {
            return Future.succeededFuture();
        }
        identity = identity.next(config.fixedEngineId, clock.millis());
        stats.inc(EngineStats.RESTARTS);
        pool.reset();
        // the old listeners close asynchronously: bind once they have, and ride out a port that is still in the
        // kernel's hands for a moment (another process's short-lived socket may hold it)
        return closing.transform(ar -> Binding.retried(vertx, () -> listen().compose(v -> listenExtra())
                .recover(f -> closeServers().transform(x -> Future.<Void>failedFuture(f)))))
            .onSuccess(v -> up = true);
    }

    // ------------------------------------------------------------------ Java API

    public int port() {
        return boundPort;
    }

    public String host() {
        return config.host;
    }

    public String baseUrl() {
        return "http://" + config.host + ":" + boundPort;
    }

    /** Bound port of an auxiliary server (side channel, bootstrap, transceiver), or -1. */
    public int auxPort(String name) {
        Integer p = auxPorts.get(name);
        return p == null ? -1 : p;
    }

    public Identity identity() {
        return identity;
    }

    public Role role() {
        return config.role;
    }

    public EngineConfig engineConfig() {
        return config;
    }

    public Faults faults() {
        return faults;
    }

    public SimClock clock() {
        return clock;
    }

    public boolean isUp() {
        return up;
    }

    /** A snapshot of {@code /sim/stats}. */
    public ObjectNode stats() {
        return onContext(this::statsJson);
    }

    /** How many holds of this kind ({@code parked}, {@code prefill}, ...) the engine has now. */
    public long holdsOfKind(String kind) {
        return onContext(() -> holds.all().stream().filter(h -> kind.equals(h.kind())).count());
    }

    /** The native keys of the holds of this kind the engine has now: which requests' KV it pins. */
    public Set<String> holdKeysOfKind(String kind) {
        return onContext(() -> holds.all().stream().filter(h -> kind.equals(h.kind())).map(KvHold::key)
            .collect(Collectors.toSet()));
    }

    /**
     * The {@code traceparent} of each of the latest {@value #TRACE_PARENTS_KEPT} inference requests, oldest first
     * ("" for a request that carried none): the trace context a caller sent, as a tracing engine would continue it.
     */
    public List<String> receivedTraceParents() {
        return onContext(() -> List.copyOf(traceParents));
    }

    /** One numeric field of {@link #stats()}. */
    public long stat(String name) {
        JsonNode v = stats().get(name);
        if (v == null) {
            throw new IllegalArgumentException("no stat " + name);
        }
        return v.asLong();
    }

    /** Makes every pinned hold with a deadline expire now, as if its native timeout fired. */
    public void expireNow() {
        onContext(() -> {
            holds.expireAll();
            return null;
        });
    }

    /** Moves the (possibly shared) clock forward and sweeps this engine's holds. */
    public void advanceClock(Duration d) {
        clock.advance(d);
        onContext(() -> {
            if (up) {
                holds.sweep();
            }
            return null;
        });
    }

    /** Zeroes the counters, clears the faults and the prefix cache, and frees every hold without counting it. */
    public void reset() {
        onContext(() -> {
            faults.clear();
            prefixCache.clear();
            for (KvHold h : new ArrayList<>(holds.all())) {
                holds.release(h.key(), FreeReason.RECEIVED);
            }
            stats.reset();
            aborts.clear();
            return null;
        });
    }

    /** Runs {@code s} on the engine's event loop and returns its result. */
    public <T> T onContext(Supplier<T> s) {
        if (Thread.currentThread() == loopThread) {
            return s.get();
        }
        CompletableFuture<T> f = new CompletableFuture<>();
        ctx.runOnContext(v -> {
            try {
                f.complete(s.get());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return join(f);
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("engine did not answer", e);
        }
    }

    private static <T> T await(Future<T> f) {
        return join(f.toCompletionStage().toCompletableFuture());
    }

    // ------------------------------------------------------------------ request plumbing for families

    /**
     * The time this engine's prefill of the prompt takes, as it starts: the fixed {@code prefill-latency-ms} plus
     * {@code prefill-ms-per-uncached-token} for each token the prefix cache does not hold. Counts the hits and misses
     * and enters the prompt's blocks in the cache. Call once per prefill the engine computes, on the event loop.
     */
    protected long prefillMs(int[] promptIds) {
        int cached = prefixCache.prefill(promptIds);
        int uncached = promptIds.length - cached;
        stats.add(EngineStats.PREFIX_HIT_TOKENS, cached);
        stats.add(EngineStats.PREFIX_MISS_TOKENS, uncached);
        return config.prefillLatencyMs + Math.round(uncached * config.prefillMsPerUncachedToken);
    }

    /**
     * Wraps an inference handler with the request-level faults (reset, error status, latency) and turns a
     * {@link Reject} into the family's error.
     */
    protected Handler<RoutingContext> inference(Handler<RoutingContext> h) {
        return rc -> {
            stats.inc(EngineStats.REQUESTS_TOTAL);
            receivedTraceParent(rc.request().getHeader(TRACEPARENT));
            if (faults.takeReset()) {
                stats.inc(EngineStats.FAULT_RESETS);
                Http.reset(rc.request());
                return;
            }
            int err = faults.takeError();
            if (err > 0) {
                stats.inc(EngineStats.FAULT_ERRORS);
                stats.inc(EngineStats.REQUESTS_FAILED);
                sendError(rc, err, faults.errorMessage(err));
                return;
            }
            long latency = faults.latencyMs();
            if (latency > 0) {
                vertx.setTimer(latency, t -> {
                    if (up && !rc.response().closed()) {
                        guarded(h, rc);
                    }
                });
            } else {
                guarded(h, rc);
            }
        };
    }

    /** Notes the trace context an inference request carried; call it on the event loop. */
    protected void receivedTraceParent(String traceParent) {
        if (traceParents.size() == TRACE_PARENTS_KEPT) {
            traceParents.removeFirst();
        }
        traceParents.addLast(traceParent == null ? "" : traceParent);
    }

    private void guarded(Handler<RoutingContext> h, RoutingContext rc) {
        try {
            h.handle(rc);
        } catch (Reject r) {
            stats.inc(EngineStats.REQUESTS_FAILED);
            sendError(rc, r.status(), r.getMessage());
        } catch (IllegalArgumentException e) {
            stats.inc(EngineStats.REQUESTS_FAILED);
            sendError(rc, 400, e.getMessage());
        }
    }

    /** The parsed JSON body, or a 400. */
    protected static ObjectNode body(RoutingContext rc) {
        String s = rc.body().asString();
        if (s == null || s.isBlank()) {
            throw Reject.badRequest("request body is required");
        }
        JsonNode n = Http.parse(s);
        if (!n.isObject()) {
            throw Reject.badRequest("request body must be a JSON object");
        }
        return (ObjectNode) n;
    }

    /** Registers a job for a client request; a client disconnect aborts it unless it is done. */
    protected Job newJob(String id, RoutingContext rc) {
        Job j = new Job(id, rc);
        jobs.add(j);
        if (rc != null) {
            rc.response().closeHandler(v -> onClientClosed(j));
        }
        return j;
    }

    /**
     * What a client disconnect does; SGLang overrides it to add its detection delay. A disconnect of a running request
     * is that request's native abort (vLLM, TensorRT-LLM): counted per request id.
     */
    protected void onClientClosed(Job j) {
        if (!j.done && !j.aborted) {
            aborts.aborted("request " + j.id());
        }
        cancelled(j);
        abort(j);
    }

    /**
     * A client cancelled {@code j} (closed its connection, or aborted it natively while it ran): counted once, in the
     * phase of the handoff it landed in; nothing for a job already over. Call it before aborting the job.
     */
    protected void cancelled(Job j) {
        stats.countCancel(j);
    }

    /** Aborts a job that is not done: cancels its timers, leaves the queue, runs its abort hook, frees its blocks. */
    protected void abort(Job j) {
        if (j.done || j.aborted) {
            return;
        }
        j.aborted = true;
        j.cancelTimers(vertx);
        stats.inc(EngineStats.REQUESTS_ABORTED);
        if (j.queued) {
            scheduler.cancel(j);
        }
        j.abortHook().run();
        release(j);
    }

    /** Ends a job normally: it is done, its remaining blocks are freed and its slot is given back. */
    protected void finish(Job j) {
        j.done = true;
        release(j);
    }

    /** Ends a job as failed (the family already answered the client). */
    protected void fail(Job j) {
        if (j.done || j.aborted) {
            return;
        }
        stats.inc(EngineStats.REQUESTS_FAILED);
        j.cancelTimers(vertx);
        if (j.queued) {
            scheduler.cancel(j);
        }
        finish(j);
    }

    private void release(Job j) {
        pool.free(j.blocks);
        j.blocks = new int[0];
        jobs.remove(j);
        scheduler.finished(j);
    }

    /** Runs {@code write} now, or after the {@code response_delay_ms} fault (the job is already done). */
    protected void respondLater(Runnable write) {
        long d = faults.responseDelayMs();
        if (d > 0) {
            vertx.setTimer(d, t -> write.run());
        } else {
            write.run();
        }
    }

    /** A new SSE writer for this request, with the stream-cut fault applied. */
    protected SseWriter sse(RoutingContext rc) {
        return new SseWriter(vertx, rc.request(), faults.takeCut(), () -> stats.inc(EngineStats.FAULT_CUTS));
    }

    /**
     * Emits SSE events one by one, {@code tokenIntervalMs} apart (or all at once), then {@code [DONE]}; stops if the
     * job was aborted or the stream closed; runs {@code onEnd} in every case once the emission stops. Events from
     * index {@code firstTokenEvent} on carry tokens (a chat stream opens with a role-only event): once one is out,
     * a cancel of the job is mid-stream.
     */
    protected void emit(Job job, SseWriter w, List<String> events, int firstTokenEvent, Runnable onEnd) {
        long interval = config.tokenIntervalMs;
        if (interval <= 0) {
            for (int i = 0; i < events.size(); i++) {
                if (!sent(job, w, events, i, firstTokenEvent)) {
                    onEnd.run();
                    return;
                }
            }
            w.done();
            onEnd.run();
            return;
        }
        emitFrom(job, w, events, 0, firstTokenEvent, interval, onEnd);
    }

    private void emitFrom(Job job, SseWriter w, List<String> events, int i, int firstTokenEvent, long interval,
        Runnable onEnd) {
        if (job.aborted) {
            return;
        }
        if (i >= events.size()) {
            w.done();
            onEnd.run();
            return;
        }
        if (!sent(job, w, events, i, firstTokenEvent)) {
            onEnd.run();
            return;
        }
        job.timer(vertx, interval, () -> emitFrom(job, w, events, i + 1, firstTokenEvent, interval, onEnd));
    }

    private static boolean sent(Job job, SseWriter w, List<String> events, int i, int firstTokenEvent) {
        if (!w.event(events.get(i))) {
            return false;
        }
        if (i >= firstTokenEvent) {
            job.tokenSent();
        }
        return true;
    }

    /** Runs {@code then} once a non-streamed request has "decoded" {@code tokens} tokens at the configured pace. */
    protected void afterDecoding(Job job, int tokens, Runnable then) {
        job.timer(vertx, config.tokenIntervalMs * tokens, then);
    }

    /** Blocks needed for a request of this prompt and output length. */
    protected int blocksFor(int promptTokens, int maxTokens) {
        return pool.blocksFor(promptTokens) + pool.blocksFor(Math.max(0, maxTokens));
    }

    /** Rejects prompts the engine cannot take (context length, KV pool). */
    protected void checkFits(int promptTokens, int maxTokens) {
        if (promptTokens + Math.max(0, maxTokens) > config.maxModelLen) {
            throw Reject.badRequest("This model's maximum context length is " + config.maxModelLen
                + " tokens. However, you requested " + (promptTokens + maxTokens) + " tokens (" + promptTokens
                + " in the messages, " + maxTokens + " in the completion).");
        }
        if (blocksFor(promptTokens, maxTokens) > pool.totalBlocks()) {
            throw Reject.badRequest("request needs more KV blocks than the engine has");
        }
    }

    // ------------------------------------------------------------------ admin

    private Router buildRouter() {
        Router r = Router.router(vertx);
        r.route().handler(BodyHandler.create(false).setBodyLimit(64L * 1024 * 1024));
        r.get("/sim/stats").handler(rc -> Http.json(rc.response(), 200, statsJson()));
        r.post("/sim/reset").handler(rc -> {
            reset();
            Http.json(rc.response(), 200, statsJson());
        });
        r.get("/sim/faults").handler(rc -> Http.json(rc.response(), 200, faultsJson()));
        r.delete("/sim/faults").handler(rc -> {
            faults.clear();
            Http.json(rc.response(), 200, faultsJson());
        });
        r.post("/sim/faults").handler(rc -> {
            try {
                faults.apply(body(rc));
                Http.json(rc.response(), 200, faultsJson());
            } catch (IllegalArgumentException | Reject e) {
                Http.json(rc.response(), 400, Http.obj().put("error", e.getMessage()));
            }
        });
        r.post("/sim/expire").handler(rc -> {
            holds.expireAll();
            Http.json(rc.response(), 200, statsJson());
        });
        r.post("/sim/clock/advance").handler(rc -> {
            long ms = body(rc).path("ms").asLong(0);
            clock.advance(Duration.ofMillis(ms));
            holds.sweep();
            Http.json(rc.response(), 200, Http.obj().put("clock_offset_ms", clock.offsetMillis()));
        });
        r.get("/sim/holds").handler(rc -> {
            ArrayNode a = Http.arr();
            long now = clock.millis();
            for (KvHold h : holds.all()) {
                a.addObject().put("key", h.key()).put("kind", h.kind()).put("blocks", h.blockCount())
                    .put("pinned_ms", now - h.pinnedAtMs())
                    .put("expires_in_ms", h.deadlineMs() == Long.MAX_VALUE ? -1 : h.deadlineMs() - now)
                    .put("leaked", h.leaked());
            }
            Http.json(rc.response(), 200, a);
        });
        r.post("/sim/crash").handler(rc -> {
            String s = rc.body().asString();
            long after = config.restartAfterCrashMs;
            if (s != null && !s.isBlank()) {
                after = Http.parse(s).path("restart_after_ms").asLong(after);
            }
            rc.response().setStatusCode(202).end();
            long restartAfter = after;
            vertx.setTimer(20, t -> crashNow(restartAfter));
        });
        routes(r);
        return r;
    }

    private ObjectNode faultsJson() {
        ObjectNode o = Http.obj();
        faults.writeTo(o);
        return o;
    }

    protected ObjectNode statsJson() {
        ObjectNode o = Http.obj();
        o.put("family", family().wire());
        o.put("role", config.role.wire());
        o.put("model", config.model);
        o.put("engine_id", identity.engineId());
        o.put("instance_id", identity.instanceId());
        o.put("incarnation", identity.incarnation());
        o.put("up", up);
        o.put("port", boundPort);
        auxPorts.forEach((k, v) -> o.put(k + "_port", v));
        o.put("clock_offset_ms", clock.offsetMillis());
        o.put("kv_block_size", pool.blockSize());
        o.put("kv_blocks_total", pool.totalBlocks());
        o.put("kv_blocks_free", pool.freeBlocks());
        o.put("kv_blocks_pinned_now", holds.pinnedBlocks());
        o.put("kv_sessions_pinned_now", holds.pinnedSessions());
        o.put("leaked", holds.leakedNow());
        o.put("running", scheduler.running());
        o.put("waiting", scheduler.waiting());
        o.put("prefix_cache_blocks", prefixCache.size());
        stats.writeTo(o);
        aborts.writeTo(o);
        familyStats(o);
        return o;
    }
}
