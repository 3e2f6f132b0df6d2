package io.handoff.connector.sglang;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.sim.EmbeddedFleet;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
import io.handoff.simulator.sglang.SglangConfig;
import io.handoff.simulator.sglang.SglangEngine;
import io.vertx.core.Vertx;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One simulated SGLang prefill and decode server in PD mode on a shared clock, the route to them, and an aggregated
 * (non-PD) server for reference answers. The prefill's bootstrap port is fixed so that it survives a crash.
 */
final class SglangSimulatedFleet extends EmbeddedFleet {

    static final String MODEL = "sim-model";
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final SimEngine aggregated;
    private final HttpClient http = HttpClient.newHttpClient();

    SglangSimulatedFleet(Vertx vertx) {
        this(vertx, new SimClock(), freePort());
    }

    private SglangSimulatedFleet(Vertx vertx, SimClock clock, int bootstrapPort) {
        this(new SglangEngine(prefillConfig(clock, bootstrapPort)).startBlocking(vertx),
                new SglangEngine(config(clock, Role.DECODE)).startBlocking(vertx),
                new SglangEngine(config(clock, Role.BOTH)).startBlocking(vertx), bootstrapPort);
    }

    private SglangSimulatedFleet(SimEngine producer, SimEngine consumer, SimEngine aggregated, int bootstrapPort) {
        super(producer, consumer, List.of(aggregated), new ConnectorConfig("tck-sglang", MODEL,
                List.of(Endpoint.of("prefill-0", producer.baseUrl())),
                List.of(Endpoint.of("decode-0", consumer.baseUrl())),
                Map.of("bootstrap-port.prefill-0", Integer.toString(bootstrapPort), "idle-timeout-seconds", "2")),
                IDLE_TIMEOUT);
        this.aggregated = aggregated;
    }

    private static SglangConfig prefillConfig(SimClock clock, int bootstrapPort) {
        SglangConfig c = config(clock, Role.PREFILL);
        c.bootstrapPort = bootstrapPort;
        return c;
    }

    private static SglangConfig config(SimClock clock, Role role) {
        SglangConfig c = fleetEngine(new SglangConfig(), clock, role, MODEL);
        c.heartbeatIntervalMs = 100; // a dead producer is noticed within 200 ms
        return c;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A plain completion on the aggregated server: the engine's answer without any handoff. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, aggregated.baseUrl(), MODEL, request);
    }
}
