package io.handoff.connector.vllm;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.sim.EmbeddedFleet;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.vertx.core.Vertx;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** One simulated vLLM producer and consumer (NixlConnector pull) on a shared clock, and the route to them. */
final class VllmSimulatedFleet extends EmbeddedFleet {

    static final String MODEL = "sim-model";
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final HttpClient http = HttpClient.newHttpClient();

    /** @param mode the NixlConnector generation the engines imitate; the route's hold options follow it */
    VllmSimulatedFleet(Vertx vertx, VllmConfig.Mode mode) {
        this(vertx, mode, new SimClock());
    }

    private VllmSimulatedFleet(Vertx vertx, VllmConfig.Mode mode, SimClock clock) {
        this(new VllmEngine(config(clock, mode, Role.PREFILL)).startBlocking(vertx),
                new VllmEngine(config(clock, mode, Role.DECODE)).startBlocking(vertx), mode);
    }

    private VllmSimulatedFleet(SimEngine producer, SimEngine consumer, VllmConfig.Mode mode) {
        super(producer, consumer, List.of(), route(producer, consumer, mode), IDLE_TIMEOUT);
    }

    private static ConnectorConfig route(SimEngine producer, SimEngine consumer, VllmConfig.Mode mode) {
        Map<String, String> options = mode == VllmConfig.Mode.LEASE
                ? Map.of("hold-mode", "lease", "lease-seconds", "30", "idle-timeout-seconds", "2")
                : Map.of("hold-mode", "fixed", "hold-seconds", "480", "idle-timeout-seconds", "2");
        return new ConnectorConfig("tck-vllm-" + mode.name().toLowerCase(), MODEL,
                List.of(Endpoint.of("prefill-0", producer.baseUrl())), List.of(Endpoint.of("decode-0",
                        consumer.baseUrl())), options);
    }

    private static VllmConfig config(SimClock clock, VllmConfig.Mode mode, Role role) {
        VllmConfig c = fleetEngine(new VllmConfig(), clock, role, MODEL);
        c.mode = mode;
        return c;
    }

    /** A plain vLLM completion (no kv_transfer_params) on the consumer: the engine's aggregated answer. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, decodeEngine().baseUrl(), MODEL, request);
    }
}
