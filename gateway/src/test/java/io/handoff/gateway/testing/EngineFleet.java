package io.handoff.gateway.testing;

import io.handoff.simulator.EngineConfig;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.sglang.SglangConfig;
import io.handoff.simulator.sglang.SglangEngine;
import io.handoff.simulator.trtllm.TrtllmConfig;
import io.handoff.simulator.trtllm.TrtllmEngine;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.vertx.core.Vertx;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

/**
 * In-process simulators of the three HTTP families, on their own Vert.x: vLLM (prefill, decode, a second prefill, a
 * second decode),
 * SGLang (prefill, decode) and TensorRT-LLM (context, generation), each family on one shared clock, plus one
 * aggregated engine per family for reference answers. Tokens come every {@value #TOKEN_INTERVAL_MS} ms so a stream
 * can be cancelled mid-way; prefills take {@value #PREFILL_LATENCY_MS} ms so one can be cancelled while it runs.
 * Every engine timer that frees KV ({@link #HOLD}) matches what the routes declare to their connectors.
 */
public final class EngineFleet implements AutoCloseable {

    public static final String ENGINE_MODEL = "sim-model";
    public static final long TOKEN_INTERVAL_MS = 5;
    public static final long PREFILL_LATENCY_MS = 150;
    /** vLLM's abort-request timeout, SGLang's bootstrap and waiting timeouts, TRT-LLM's kv_transfer_timeout_ms. */
    public static final Duration HOLD = Duration.ofSeconds(60);

    private final Vertx vertx;
    private final FamilyEngines vllm;
    private final FamilyEngines sglang;
    private final FamilyEngines trtllm;
    private final StallingProxy stallingVllmDecode;

    private EngineFleet(Vertx vertx) {
        this.vertx = vertx;
        this.vllm = startVllm(vertx);
        this.sglang = startSglang(vertx);
        this.trtllm = startTrtllm(vertx);
        this.stallingVllmDecode = StallingProxy.to(vllm.decode().port());
    }

    public static EngineFleet start() {
        return new EngineFleet(Vertx.vertx());
    }

    public FamilyEngines vllm() {
        return vllm;
    }

    public FamilyEngines sglang() {
        return sglang;
    }

    public FamilyEngines trtllm() {
        return trtllm;
    }

    /** A proxy in front of the vLLM decode engine that can hold its answers back, as a hung engine does. */
    public StallingProxy stallingVllmDecode() {
        return stallingVllmDecode;
    }

    public List<FamilyEngines> families() {
        return List.of(vllm, sglang, trtllm);
    }

    /** The engines of a family by its connector name. */
    public FamilyEngines family(String name) {
        return families().stream().filter(f -> f.family().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no family " + name));
    }

    /** KV blocks pinned now on every routed engine. */
    public long pinnedBlocks() {
        return families().stream().mapToLong(FamilyEngines::pinnedBlocks).sum();
    }

    /** Requests every routed engine received so far. */
    public long requestsTotal() {
        return families().stream().mapToLong(FamilyEngines::requestsTotal).sum();
    }

    /** Restarts crashed engines and clears faults everywhere. */
    public void heal() {
        families().forEach(FamilyEngines::heal);
        stallingVllmDecode.resume();
    }

    private static FamilyEngines startVllm(Vertx vertx) {
        SimClock clock = new SimClock();
        VllmEngine prefill = new VllmEngine(vllmConfig(clock, Role.PREFILL)).startBlocking(vertx);
        VllmEngine secondPrefill = new VllmEngine(vllmConfig(clock, Role.PREFILL)).startBlocking(vertx);
        VllmEngine decode = new VllmEngine(vllmConfig(clock, Role.DECODE)).startBlocking(vertx);
        VllmEngine secondDecode = new VllmEngine(vllmConfig(clock, Role.DECODE)).startBlocking(vertx);
        VllmEngine aggregated = new VllmEngine(vllmConfig(clock, Role.BOTH)).startBlocking(vertx);
        return new FamilyEngines("vllm", clock, prefill, List.of(secondPrefill), decode, List.of(secondDecode),
                aggregated);
    }

    private static VllmConfig vllmConfig(SimClock clock, Role role) {
        VllmConfig c = common(new VllmConfig(), clock, role);
        c.mode = VllmConfig.Mode.LEGACY;
        c.abortRequestTimeoutMs = HOLD.toMillis();
        return c;
    }

    private static FamilyEngines startSglang(Vertx vertx) {
        SimClock clock = new SimClock();
        SglangConfig p = sglangConfig(clock, Role.PREFILL);
        p.bootstrapPort = freePort(); // fixed, so that it survives a crash
        SglangEngine prefill = new SglangEngine(p).startBlocking(vertx);
        SglangEngine decode = new SglangEngine(sglangConfig(clock, Role.DECODE)).startBlocking(vertx);
        SglangEngine aggregated = new SglangEngine(sglangConfig(clock, Role.BOTH)).startBlocking(vertx);
        return new FamilyEngines("sglang", clock, prefill, List.of(), decode, List.of(), aggregated);
    }

    private static SglangConfig sglangConfig(SimClock clock, Role role) {
        SglangConfig c = common(new SglangConfig(), clock, role);
        c.bootstrapTimeoutMs = HOLD.toMillis();
        c.waitingTimeoutMs = HOLD.toMillis();
        c.heartbeatIntervalMs = 100; // a dead producer is noticed within 200 ms
        return c;
    }

    private static FamilyEngines startTrtllm(Vertx vertx) {
        SimClock clock = new SimClock();
        TrtllmEngine context = new TrtllmEngine(trtllmConfig(clock, Role.PREFILL)).startBlocking(vertx);
        TrtllmEngine generation = new TrtllmEngine(trtllmConfig(clock, Role.DECODE)).startBlocking(vertx);
        TrtllmEngine aggregated = new TrtllmEngine(trtllmConfig(clock, Role.BOTH)).startBlocking(vertx);
        return new FamilyEngines("trtllm", clock, context, List.of(), generation, List.of(), aggregated);
    }

    private static TrtllmConfig trtllmConfig(SimClock clock, Role role) {
        TrtllmConfig c = common(new TrtllmConfig(), clock, role);
        c.kvTransferTimeoutMs = HOLD.toMillis();
        return c;
    }

    private static <C extends EngineConfig> C common(C c, SimClock clock, Role role) {
        c.clock = clock;
        c.role = role;
        c.model = ENGINE_MODEL;
        c.tokenIntervalMs = TOKEN_INTERVAL_MS;
        c.prefillLatencyMs = role == Role.PREFILL ? PREFILL_LATENCY_MS : 0;
        return c;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The bound bootstrap port of the SGLang prefill. */
    public int sglangBootstrapPort() {
        return ((SglangEngine) sglang.prefill()).bootstrapPort();
    }

    @Override
    public void close() {
        stallingVllmDecode.close();
        families().forEach(FamilyEngines::stop);
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    static String url(SimEngine engine) {
        return engine.baseUrl();
    }
}
