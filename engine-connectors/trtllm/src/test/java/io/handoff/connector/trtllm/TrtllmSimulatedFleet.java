package io.handoff.connector.trtllm;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.trtllm.TrtllmConfig;
import io.handoff.simulator.trtllm.TrtllmEngine;
import io.vertx.core.Vertx;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One simulated trtllm-serve context worker and one generation worker on a shared clock, with the same
 * {@code kv_transfer_timeout_ms} as the route, and the route to them.
 */
final class TrtllmSimulatedFleet implements SimulatedFleet {

    static final String MODEL = "sim-model";
    static final long TIMEOUT_MS = 60_000;
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    final TrtllmEngine context;
    final TrtllmEngine generation;
    private final EmbeddedEngine contextView;
    private final EmbeddedEngine generationView;
    private final ConnectorConfig route;
    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * @param styles    the route's {@code schedule-styles}
     * @param engineKey the workers' internal_request_auth_key (null: none)
     * @param routeKey  the route's {@code auth-key} (null: none)
     */
    TrtllmSimulatedFleet(Vertx vertx, String styles, String engineKey, String routeKey) {
        SimClock clock = new SimClock();
        context = new TrtllmEngine(config(clock, Role.PREFILL, engineKey)).startBlocking(vertx);
        generation = new TrtllmEngine(config(clock, Role.DECODE, engineKey)).startBlocking(vertx);
        contextView = new EmbeddedEngine(context);
        generationView = new EmbeddedEngine(generation);
        Map<String, String> options = new HashMap<>(Map.of("schedule-styles", styles,
                "kv-transfer-timeout-ms", Long.toString(TIMEOUT_MS), "idle-timeout-seconds", "2"));
        if (routeKey != null) {
            options.put("auth-key", routeKey);
        }
        route = new ConnectorConfig("tck-trtllm", MODEL, List.of(Endpoint.of("ctx-0", context.baseUrl())),
                List.of(Endpoint.of("gen-0", generation.baseUrl())), options);
    }

    TrtllmSimulatedFleet(Vertx vertx, String styles) {
        this(vertx, styles, null, null);
    }

    private static TrtllmConfig config(SimClock clock, Role role, String key) {
        TrtllmConfig c = new TrtllmConfig();
        c.clock = clock;
        c.role = role;
        c.model = MODEL;
        c.kvTransferTimeoutMs = TIMEOUT_MS;
        c.authKey = key;
        c.tokenIntervalMs = 5; // slow enough to cancel a stream mid-way
        return c;
    }

    @Override
    public ConnectorConfig route() {
        return route;
    }

    @Override
    public SimulatedEngine engine(Endpoint endpoint) {
        return endpoint.equals(prefill()) ? contextView : generationView;
    }

    EmbeddedEngine contextView() {
        return contextView;
    }

    EmbeddedEngine generationView() {
        return generationView;
    }

    @Override
    public void advanceClock(Duration by) {
        context.advanceClock(by); // the clock is shared: move it once, then let the other engine sweep too
        generationView.sweep();
    }

    /** A plain aggregated completion (no disaggregated_params) on the generation worker: the reference answer. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, generation.baseUrl(), MODEL, request);
    }


    @Override
    public Duration idleTimeout() {
        return IDLE_TIMEOUT;
    }

    @Override
    public void close() {
        context.stopBlocking();
        generation.stopBlocking();
    }
}
