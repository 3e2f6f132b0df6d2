package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.ConnectorService;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.simulator.Role;
import io.handoff.simulator.SimClock;
import io.handoff.simulator.openengine.OpenEngineConfig;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import io.smallrye.mutiny.Multi;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** Starts simulated openengine prefill and decode engines on one clock, and the connector in front of them. */
abstract class SimulatorSupport {
    static final String PROMPT = "The quick brown fox jumps over the lazy dog again and again";
    static final Duration WAIT = Duration.ofSeconds(10);
    static Vertx vertx;
    final SimClock clock = new SimClock();
    final List<OpenEngineSimEngine> engines = new ArrayList<>();
    final List<EngineConnector> connectors = new ArrayList<>();

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @AfterEach
    void stopAll() {
        connectors.forEach(EngineConnector::close);
        for (OpenEngineSimEngine e : engines) {
            try {
                e.stopBlocking();
            } catch (RuntimeException ignored) {
                // a crashed engine may already be closed
            }
        }
    }

    OpenEngineSimEngine engine(Role role, Consumer<OpenEngineConfig> tune) {
        OpenEngineConfig c = new OpenEngineConfig();
        c.role = role;
        c.clock = clock;
        tune.accept(c);
        OpenEngineSimEngine e = new OpenEngineSimEngine(c).startBlocking(vertx);
        engines.add(e);
        return e;
    }

    static Endpoint endpoint(String name, OpenEngineSimEngine e) {
        return Endpoint.of(name, e.grpcTarget());
    }

    static ConnectorService service() {
        for (ConnectorService s : ServiceLoader.load(ConnectorService.class)) {
            if (s.family().equals(OpenEngineConnectorService.FAMILY)) {
                return s;
            }
        }
        throw new AssertionError("openengine not found by ServiceLoader");
    }

    EngineConnector connector(List<Endpoint> prefill, List<Endpoint> decode, Map<String, String> options) {
        ConnectorConfig cfg = new ConnectorConfig("route-1", "sim-model", prefill, decode, options);
        service().initialise(cfg);
        // the connector reads the simulators' clock, so moving it moves both sides' time
        EngineConnector conn = service().create(cfg, ConnectorContext.of(vertx, clock.asClock()));
        connectors.add(conn);
        return conn;
    }

    EngineConnector connector(OpenEngineSimEngine p, OpenEngineSimEngine d, String... options) {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i < options.length; i += 2) {
            o.put(options[i], options[i + 1]);
        }
        return connector(List.of(endpoint("prefill-0", p)), List.of(endpoint("decode-0", d)), o);
    }

    static GenerateRequest request(int maxTokens) {
        return GenerateRequest.newBuilder().setPrompt(PROMPT)
            .setStopping(StoppingOptions.newBuilder().setMaxTokens(maxTokens)).build();
    }

    static Handoff plan(EngineConnector c, String id, GenerateRequest r, OpenEngineSimEngine p, OpenEngineSimEngine d) {
        return c.plan(id, ScheduleStyle.CONTEXT_FIRST, r, endpoint("prefill-0", p), endpoint("decode-0", d));
    }

    static PrefillResult.Ready ready(EngineConnector c, Handoff h) {
        return assertInstanceOf(PrefillResult.Ready.class, c.prefill(h).await().atMost(WAIT));
    }

    static List<GenerateResponse> collect(Multi<GenerateResponse> m) {
        return m.collect().asList().await().atMost(WAIT);
    }

    static EngineException failureOf(Runnable r) {
        try {
            r.run();
        } catch (EngineException e) {
            return e;
        } catch (RuntimeException e) {
            if (e.getCause() instanceof EngineException ee) {
                return ee;
            }
            throw e;
        }
        throw new AssertionError("expected an EngineException");
    }

    static String text(List<GenerateResponse> events) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(GenerateResponse::hasToken).forEach(e -> sb.append(e.getToken().getText()));
        return sb.toString();
    }
}
