package io.handoff.gateway.routing;

import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.vllm.VllmConnectorService;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.simulator.Role;
import io.handoff.simulator.vllm.VllmConfig;
import io.handoff.simulator.vllm.VllmEngine;
import io.vertx.core.Vertx;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Endpoint choice within a pool: least outstanding requests, ties broken round-robin, full endpoints skipped; and
 * the breaker: open after N consecutive failures, skipped while open, back only after a healthy probe through the
 * connector's discovery surface (a real vLLM connector probing a simulated vLLM) once the open period has passed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndpointPoolTest {

    private static final Duration OPEN_FOR = Duration.ofSeconds(10);

    private Vertx vertx;
    private VllmEngine engine;
    private EngineConnector connector;
    private MutableClock clock;

    @BeforeAll
    void startEngineAndConnector() {
        vertx = Vertx.vertx();
        VllmConfig c = new VllmConfig();
        c.role = Role.DECODE;
        engine = new VllmEngine(c).startBlocking(vertx);
        ConnectorConfig route = new ConnectorConfig("pool-test", "sim-model", List.of(endpoint("a")),
                List.of(endpoint("b")), Map.of("hold-mode", "fixed"));
        connector = new VllmConnectorService().create(route, ConnectorContext.of(vertx, clock));
    }

    @AfterAll
    void stop() {
        connector.close();
        engine.stopBlocking();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @BeforeEach
    void freshClockAndHealthyEngine() {
        clock = new MutableClock();
        engine.faults().clear();
    }

    private Endpoint endpoint(String name) {
        return Endpoint.of(name, engine.baseUrl());
    }

    private EndpointPool pool(int maxOutstanding, String... names) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String n : names) {
            endpoints.add(endpoint(n));
        }
        return new EndpointPool("test", endpoints, clock, 3, OPEN_FOR, maxOutstanding, connector::probe,
                ProbesAsTheyAre.RUNNER);
    }

    private static String take(EndpointPool pool) {
        return pool.acquire(Set.of()).map(p -> p.endpoint().name()).orElse("none");
    }

    @Test
    void idleEndpointsTakeTurns() {
        EndpointPool pool = pool(10, "a", "b", "c");
        List<String> chosen = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            PooledEndpoint e = pool.acquire(Set.of()).orElseThrow();
            chosen.add(e.endpoint().name());
            e.release(null);
        }
        assertEquals(List.of("a", "b", "c", "a", "b", "c"), chosen);
    }

    @Test
    void theLeastOutstandingEndpointIsChosenWhateverTheTurn() {
        EndpointPool pool = pool(10, "a", "b", "c");
        pool.member("a").orElseThrow().tryAcquire(Integer.MAX_VALUE);
        pool.member("a").orElseThrow().tryAcquire(Integer.MAX_VALUE);
        pool.member("c").orElseThrow().tryAcquire(Integer.MAX_VALUE);
        assertEquals("b", take(pool));
        assertEquals("b", take(pool), "b (1) and c (1) tie; the turn falls on b");
        assertEquals("c", take(pool));
        // all at two: turns again
        assertEquals(List.of("a", "b", "c"), List.of(take(pool), take(pool), take(pool)).stream().sorted().toList());
    }

    @Test
    void fullAndExcludedEndpointsAreSkipped() {
        EndpointPool pool = pool(1, "a", "b");
        assertEquals("a", take(pool));
        assertEquals("b", take(pool));
        assertEquals("none", take(pool), "every endpoint is at its limit");
        assertFalse(pool.available());
        pool.member("a").orElseThrow().release(null);
        assertTrue(pool.available());
        assertEquals("none", pool.acquire(Set.of(endpoint("a"))).map(p -> p.endpoint().name()).orElse("none"));
        assertEquals("a", take(pool));
    }

    @Test
    void theBreakerOpensAfterConsecutiveFailuresAndClosesOnlyAfterAHealthyProbe() {
        EndpointPool pool = pool(10, "a", "b");
        PooledEndpoint a = pool.member("a").orElseThrow();
        for (int i = 0; i < 2; i++) {
            a.tryAcquire(Integer.MAX_VALUE);
            a.release("refused");
        }
        a.tryAcquire(Integer.MAX_VALUE);
        a.release(null); // a success in between: failures count only when consecutive
        for (int i = 0; i < 2; i++) {
            a.tryAcquire(Integer.MAX_VALUE);
            a.release("refused");
        }
        assertEquals(EndpointBreaker.State.CLOSED, a.breaker().state());
        a.tryAcquire(Integer.MAX_VALUE);
        a.release("refused");
        assertEquals(EndpointBreaker.State.OPEN, a.breaker().state());
        assertEquals("refused", a.breaker().lastFailure());

        for (int i = 0; i < 4; i++) {
            PooledEndpoint e = pool.acquire(Set.of()).orElseThrow();
            assertEquals("b", e.endpoint().name(), "an open endpoint is skipped");
            e.release(null);
        }
        assertEquals("none", pool.acquire(Set.of(endpoint("b"))).map(p -> p.endpoint().name()).orElse("none"));

        // the open period passes while the engine is still unhealthy: the probe keeps it open, for another period
        engine.faults().healthStatus(503);
        clock.advance(OPEN_FOR);
        assertEquals("b", take(pool));
        Awaitility.await("the probe of a answered").atMost(Duration.ofSeconds(10))
                .until(() -> a.breaker().state() == EndpointBreaker.State.OPEN);
        assertTrue(a.breaker().lastFailure().contains("503"), a.breaker().lastFailure());
        engine.faults().clear();
        clock.advance(OPEN_FOR.minusSeconds(1));
        assertEquals("none", pool.acquire(Set.of(endpoint("b"))).map(p -> p.endpoint().name()).orElse("none"),
                "no new probe before the new open period passed");
        assertEquals(EndpointBreaker.State.OPEN, a.breaker().state());

        // healthy again, and the period passed: the next choice probes, and a healthy answer closes the breaker
        clock.advance(Duration.ofSeconds(1));
        pool.acquire(Set.of(endpoint("b")));
        Awaitility.await("the healthy probe of a closed its breaker").atMost(Duration.ofSeconds(10))
                .until(() -> a.breaker().state() == EndpointBreaker.State.CLOSED);
        assertEquals("a", pool.acquire(Set.of(endpoint("b"))).orElseThrow().endpoint().name());
    }

    @Test
    void aPoolWithNothingToGiveSaysWhetherItIsFullOutOfServiceOrMisconfigured() {
        EndpointPool pool = pool(1, "a", "b");
        PooledEndpoint a = pool.acquire(Set.of()).orElseThrow();
        PooledEndpoint b = pool.acquire(Set.of()).orElseThrow();
        assertTrue(pool.acquire(Set.of()).isEmpty());
        assertEquals(PoolShortage.Kind.FULL, pool.shortage().kind(), "both take traffic, both are at their limit");

        a.breaker().trip(EndpointVerdict.WRONG_MODEL + ": endpoint a does not serve model 'm' of route r (it serves "
                + "[x]); the engine's own detail");
        assertEquals(PoolShortage.Kind.FULL, pool.shortage().kind(), "b still takes traffic");
        b.breaker().trip("connection refused");
        assertEquals(PoolShortage.Kind.OUT_OF_SERVICE, pool.shortage().kind(),
                "one endpoint is out for a failure that may pass");

        b.breaker().trip(EndpointVerdict.WRONG_ROLE + ": endpoint b answers as PREFILL but is in the decode pool of "
                + "route r, which needs DECODE; detail");
        PoolShortage misconfigured = pool.shortage();
        assertEquals(PoolShortage.Kind.MISCONFIGURED, misconfigured.kind());
        assertEquals(List.of("wrong model: endpoint a does not serve model 'm' of route r (it serves [x])",
                "wrong role: endpoint b answers as PREFILL but is in the decode pool of route r, which needs DECODE"),
                misconfigured.verdicts());
        assertFalse(misconfigured.wrongRole(), "one of them serves the wrong model");
    }

    /** One verdict for every leg kind: what the engine judged about the request says nothing of its health. */
    @Test
    void aLegFailureCountsAgainstTheBreakerUnlessTheEngineJudgedTheRequestOrItWasCancelled() {
        assertFalse(PooledEndpoint.countsAgainst(null));
        for (ErrorCode judged : List.of(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE,
                ErrorCode.ERROR_CODE_CANCELLED)) {
            assertFalse(PooledEndpoint.countsAgainst(EngineException.sentFinal(judged, "judged")), judged.name());
        }
        assertTrue(PooledEndpoint.countsAgainst(EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL,
                "connection refused")));
        assertTrue(PooledEndpoint.countsAgainst(EngineException.sentRetryable(ErrorCode.ERROR_CODE_OVERLOADED,
                "HTTP 503")));
        assertTrue(PooledEndpoint.countsAgainst(new IllegalStateException("anything else")));

        EndpointPool pool = pool(4, "a");
        for (int i = 0; i < 5; i++) {
            PooledEndpoint a = pool.acquire(Set.of()).orElseThrow();
            a.finished(EngineException.sentFinal(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "bad request"));
            assertTrue(a.breaker().admits(), "a bad request never opens the breaker");
        }
        for (int i = 0; i < 3; i++) {
            pool.acquire(Set.of()).orElseThrow().finished(EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL,
                    "connection refused"));
        }
        assertFalse(pool.member("a").orElseThrow().breaker().admits(), "three unreachable legs open it");
    }
}
