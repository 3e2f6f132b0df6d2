package io.handoff.connector.openengine;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.SimulatedEngine;
import io.handoff.connector.tck.SimulatedFleet;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.openengine.OpenEngineConfig;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The openengine simulators as the contract suite sees them: a prefill and a decode engine on one clock, plus an
 * aggregated engine that gives the reference answer without touching the legs' counters.
 */
final class OpenEngineFleet implements SimulatedFleet {
    /** The route's prefill deadline: the suite's "silent producer" waits longer than this. */
    static final Duration PREFILL_DEADLINE = Duration.ofSeconds(2);
    private final OpenEngineSimEngine prefill;
    private final OpenEngineSimEngine decode;
    private final OpenEngineSimEngine aggregated;
    private final EmbeddedEngine prefillView;
    private final EmbeddedEngine decodeView;
    private final ConnectorConfig route;
    private final ManagedChannel reference;

    OpenEngineFleet(Vertx vertx) {
        SimClock clock = new SimClock();
        prefill = start(vertx, clock, Role.PREFILL);
        decode = start(vertx, clock, Role.DECODE);
        aggregated = start(vertx, clock, Role.BOTH);
        prefillView = EmbeddedEngine.countingUsedBlocks(prefill);
        decodeView = EmbeddedEngine.countingUsedBlocks(decode);
        route = new ConnectorConfig("tck-openengine", "sim-model",
            List.of(Endpoint.of("prefill-0", prefill.grpcTarget())), List.of(Endpoint.of("decode-0", decode.grpcTarget())),
            Map.of("hold-seconds", "60", "prefill-timeout-ms", String.valueOf(PREFILL_DEADLINE.toMillis())));
        reference = NettyChannelBuilder.forAddress(aggregated.host(), aggregated.grpcPort()).usePlaintext().build();
    }

    private static OpenEngineSimEngine start(Vertx vertx, SimClock clock, Role role) {
        OpenEngineConfig c = new OpenEngineConfig();
        c.role = role;
        c.clock = clock;
        c.tokenIntervalMs = 5; // so that a stream can be cancelled mid-way
        c.kvSessionTimeoutMs = 60_000; // matches the route's hold-seconds
        return new OpenEngineSimEngine(c).startBlocking(vertx);
    }

    @Override
    public ConnectorConfig route() {
        return route;
    }

    @Override
    public SimulatedEngine engine(Endpoint endpoint) {
        return endpoint.uri().toString().equals(prefill.grpcTarget()) ? prefillView : decodeView;
    }

    @Override
    public void advanceClock(Duration by) {
        prefill.advanceClock(by); // one shared clock: every engine sweeps its holds
        decode.advanceClock(Duration.ZERO);
    }

    @Override
    public String aggregatedText(GenerateRequest request) {
        StringBuilder sb = new StringBuilder();
        Iterator<GenerateResponse> it = InferenceGrpc.newBlockingStub(reference)
            .withDeadlineAfter(10, TimeUnit.SECONDS).generate(request);
        it.forEachRemaining(e -> {
            if (e.hasToken() && e.getToken().getOutputIndex() == 0) {
                sb.append(e.getToken().getText());
            }
        });
        return sb.toString();
    }

    @Override
    public Duration idleTimeout() {
        return PREFILL_DEADLINE;
    }

    @Override
    public void close() {
        reference.shutdownNow();
        for (OpenEngineSimEngine e : List.of(prefill, decode, aggregated)) {
            try {
                e.stopBlocking();
            } catch (RuntimeException ignored) {
                // an engine may be down after a crash case
            }
        }
    }
}
