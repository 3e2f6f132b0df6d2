package io.handoff.connector.openengine;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.tck.sim.EmbeddedEngine;
import io.handoff.connector.tck.sim.EmbeddedFleet;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;
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
final class OpenEngineFleet extends EmbeddedFleet {
    /** The route's prefill deadline: the suite's "silent producer" waits longer than this. */
    static final Duration PREFILL_DEADLINE = Duration.ofSeconds(2);
    private final OpenEngineSimEngine aggregated;
    private final ManagedChannel reference;

    OpenEngineFleet(Vertx vertx) {
        this(vertx, new SimClock());
    }

    private OpenEngineFleet(Vertx vertx, SimClock clock) {
        this(start(vertx, clock, Role.PREFILL), start(vertx, clock, Role.DECODE), start(vertx, clock, Role.BOTH));
    }

    // the aggregated engine answers reference runs only: not one of the route's engines, clock moves leave it be
    private OpenEngineFleet(OpenEngineSimEngine prefill, OpenEngineSimEngine decode, OpenEngineSimEngine aggregated) {
        super(prefill, decode, List.of(), new ConnectorConfig("tck-openengine", "sim-model",
            List.of(Endpoint.of("prefill-0", prefill.grpcTarget())),
            List.of(Endpoint.of("decode-0", decode.grpcTarget())),
            Map.of("hold-seconds", "60", "prefill-timeout-ms", String.valueOf(PREFILL_DEADLINE.toMillis()))),
            PREFILL_DEADLINE, EmbeddedEngine::countingUsedBlocks);
        this.aggregated = aggregated;
        reference = NettyChannelBuilder.forAddress(aggregated.host(), aggregated.grpcPort()).usePlaintext().build();
    }

    private static OpenEngineSimEngine start(Vertx vertx, SimClock clock, Role role) {
        OpenEngineConfig c = fleetEngine(new OpenEngineConfig(), clock, role, "sim-model");
        c.kvSessionTimeoutMs = 60_000; // matches the route's hold-seconds
        return new OpenEngineSimEngine(c).startBlocking(vertx);
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
    public void close() {
        reference.shutdownNow();
        for (SimEngine e : List.of(prefillEngine(), decodeEngine(), aggregated)) {
            try {
                e.stopBlocking();
            } catch (RuntimeException ignored) {
                // an engine may be down after a crash case
            }
        }
    }
}
