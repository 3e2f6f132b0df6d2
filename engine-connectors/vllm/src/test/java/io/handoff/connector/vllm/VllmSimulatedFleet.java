package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.vertx.core.Vertx;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** One simulated vLLM producer and consumer (NixlConnector pull) on a shared clock, and the route to them. */
final class VllmSimulatedFleet implements SimulatedFleet {

    static final String MODEL = "sim-model";
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final VllmEngine producer;
    private final VllmEngine consumer;
    private final EmbeddedEngine producerView;
    private final EmbeddedEngine consumerView;
    private final ConnectorConfig route;
    private final HttpClient http = HttpClient.newHttpClient();

    /** @param mode the NixlConnector generation the engines imitate; the route's hold options follow it */
    VllmSimulatedFleet(Vertx vertx, VllmConfig.Mode mode) {
        SimClock clock = new SimClock();
        producer = new VllmEngine(config(clock, mode, Role.PREFILL)).startBlocking(vertx);
        consumer = new VllmEngine(config(clock, mode, Role.DECODE)).startBlocking(vertx);
        producerView = new EmbeddedEngine(producer);
        consumerView = new EmbeddedEngine(consumer);
        Map<String, String> options = mode == VllmConfig.Mode.LEASE
                ? Map.of("hold-mode", "lease", "lease-seconds", "30", "idle-timeout-seconds", "2")
                : Map.of("hold-mode", "fixed", "hold-seconds", "480", "idle-timeout-seconds", "2");
        route = new ConnectorConfig("tck-vllm-" + mode.name().toLowerCase(), MODEL,
                List.of(Endpoint.of("prefill-0", producer.baseUrl())), List.of(Endpoint.of("decode-0",
                        consumer.baseUrl())), options);
    }

    private static VllmConfig config(SimClock clock, VllmConfig.Mode mode, Role role) {
        VllmConfig c = new VllmConfig();
        c.clock = clock;
        c.mode = mode;
        c.role = role;
        c.model = MODEL;
        c.tokenIntervalMs = 5; // slow enough to cancel a stream mid-way
        return c;
    }

    @Override
    public ConnectorConfig route() {
        return route;
    }

    @Override
    public SimulatedEngine engine(Endpoint endpoint) {
        return endpoint.equals(prefill()) ? producerView : consumerView;
    }

    @Override
    public void advanceClock(Duration by) {
        producer.advanceClock(by); // the clock is shared: move it once, then let the other engine sweep too
        consumerView.sweep();
    }

    /** A plain vLLM completion (no kv_transfer_params) on the consumer: the engine's aggregated answer. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, consumer.baseUrl(), MODEL, request);
    }


    @Override
    public Duration idleTimeout() {
        return IDLE_TIMEOUT;
    }

    @Override
    public void close() {
        producer.stopBlocking();
        consumer.stopBlocking();
    }
}
