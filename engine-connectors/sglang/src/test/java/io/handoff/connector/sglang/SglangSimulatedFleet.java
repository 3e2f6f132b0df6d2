package io.handoff.connector.sglang;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.connector.testsupport.openai.AggregatedRun;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
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
final class SglangSimulatedFleet implements SimulatedFleet {

    static final String MODEL = "sim-model";
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final SglangEngine producer;
    private final SglangEngine consumer;
    private final SglangEngine aggregated;
    private final EmbeddedEngine producerView;
    private final EmbeddedEngine consumerView;
    private final ConnectorConfig route;
    private final HttpClient http = HttpClient.newHttpClient();

    SglangSimulatedFleet(Vertx vertx) {
        SimClock clock = new SimClock();
        int bootstrapPort = freePort();
        SglangConfig p = config(clock, Role.PREFILL);
        p.bootstrapPort = bootstrapPort;
        producer = new SglangEngine(p).startBlocking(vertx);
        consumer = new SglangEngine(config(clock, Role.DECODE)).startBlocking(vertx);
        aggregated = new SglangEngine(config(clock, Role.BOTH)).startBlocking(vertx);
        producerView = new EmbeddedEngine(producer);
        consumerView = new EmbeddedEngine(consumer);
        route = new ConnectorConfig("tck-sglang", MODEL, List.of(Endpoint.of("prefill-0", producer.baseUrl())),
                List.of(Endpoint.of("decode-0", consumer.baseUrl())),
                Map.of("bootstrap-port.prefill-0", Integer.toString(bootstrapPort), "idle-timeout-seconds", "2"));
    }

    private static SglangConfig config(SimClock clock, Role role) {
        SglangConfig c = new SglangConfig();
        c.clock = clock;
        c.role = role;
        c.model = MODEL;
        c.tokenIntervalMs = 5; // slow enough to cancel a stream mid-way
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

    SglangEngine producer() {
        return producer;
    }

    SglangEngine consumer() {
        return consumer;
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
        producer.advanceClock(by); // the clock is shared: move it once, then let the others sweep too
        consumerView.sweep();
        aggregated.advanceClock(Duration.ZERO);
    }

    /** A plain completion on the aggregated server: the engine's answer without any handoff. */
    @Override
    public String aggregatedText(GenerateRequest request) {
        return AggregatedRun.text(http, aggregated.baseUrl(), MODEL, request);
    }

    @Override
    public Duration idleTimeout() {
        return IDLE_TIMEOUT;
    }

    @Override
    public void close() {
        producer.stopBlocking();
        consumer.stopBlocking();
        aggregated.stopBlocking();
    }
}
