package io.handoff.connector.trtllm;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.connector.tck.sim.EmbeddedFleet;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
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
final class TrtllmSimulatedFleet extends EmbeddedFleet {

    static final String MODEL = "sim-model";
    static final long TIMEOUT_MS = 60_000;
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * @param styles    the route's {@code schedule-styles}
     * @param engineKey the workers' internal_request_auth_key (null: none)
     * @param routeKey  the route's {@code auth-key} (null: none)
     */
    TrtllmSimulatedFleet(Vertx vertx, String styles, String engineKey, String routeKey) {
        this(vertx, new SimClock(), styles, engineKey, routeKey);
    }

    TrtllmSimulatedFleet(Vertx vertx, String styles) {
        this(vertx, styles, null, null);
    }

    private TrtllmSimulatedFleet(Vertx vertx, SimClock clock, String styles, String engineKey, String routeKey) {
        this(new TrtllmEngine(config(clock, Role.PREFILL, engineKey)).startBlocking(vertx),
                new TrtllmEngine(config(clock, Role.DECODE, engineKey)).startBlocking(vertx), styles, routeKey);
    }

    private TrtllmSimulatedFleet(SimEngine context, SimEngine generation, String styles, String routeKey) {
        super(context, generation, List.of(), route(context, generation, styles, routeKey), IDLE_TIMEOUT);
    }

    private static ConnectorConfig route(SimEngine context, SimEngine generation, String styles, String routeKey) {
        Map<String, String> options = new HashMap<>(Map.of("schedule-styles", styles,
                "kv-transfer-timeout-ms", Long.toString(TIMEOUT_MS), "idle-timeout-seconds", "2"));
        if (routeKey != null) {
            options.put("auth-key", routeKey);
        }
        return new ConnectorConfig("tck-trtllm", MODEL, List.of(Endpoint.of("ctx-0", context.baseUrl())),
                List.of(Endpoint.of("gen-0", generation.baseUrl())), options);
    }

    private static TrtllmConfig config(SimClock clock, Role role, String key) {
        TrtllmConfig c = fleetEngine(new TrtllmConfig(), clock, role, MODEL);
        c.kvTransferTimeoutMs = TIMEOUT_MS;
        c.authKey = key;
        return c;
    }

    /** The context worker, as the suite sees it. */
    EmbeddedEngine contextView() {
        return prefillView();
    }

    /** The generation worker, as the suite sees it. */
    EmbeddedEngine generationView() {
        return decodeView();
    }

    /** A plain aggregated completion (no disaggregated_params) on the generation worker: the reference answer. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, decodeEngine().baseUrl(), MODEL, request);
    }
}
