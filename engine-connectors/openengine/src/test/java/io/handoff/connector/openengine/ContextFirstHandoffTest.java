package io.handoff.connector.openengine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.handoff.connector.spi.AbortMode;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.EngineRole;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.simulator.Role;
import io.handoff.simulator.openengine.OpenEngineSimEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ContextFirstHandoffTest extends SimulatorSupport {

    @Test
    void contextFirstGivesTheSimulatorsAggregatedAnswerAndLeavesNothingPinned() {
        OpenEngineSimEngine agg = engine(Role.BOTH, c -> { });
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        List<GenerateResponse> aggregated = collect(conn.decodeLocally("agg-1", request(12), endpoint("agg", agg)));

        Handoff h = plan(conn, "req-1", request(12), p, d);
        PrefillResult.Ready ready = ready(conn, h);
        HeldKv held = ready.held().get(0);
        assertEquals("parked-prefill-kv", held.resource());
        assertFalse(held.releasable());
        assertTrue(held.handle().get("session_id").startsWith("oe-kv-"));
        assertEquals(clock.millis() + 60_000, held.heldUntil().toEpochMilli(), 1_000);
        assertTrue(p.stat("kv_blocks_pinned_now") > 0);

        List<GenerateResponse> events = collect(conn.decode(ready.handoff()));
        assertEquals(text(aggregated), text(events));
        assertEquals(aggregated.size(), events.size());
        assertEquals(12, events.get(events.size() - 1).getUsage().getCompletionTokens());
        assertEquals(0, p.stat("kv_blocks_pinned_now"));
        assertEquals(1, p.stat("freed_by_pull"));
        // this replica saw the decode's tokens, so it knows the pull freed the producer's KV
        assertEquals(DischargeResult.Outcome.RELEASED, conn.discharge(held).await().atMost(WAIT).outcome());
    }

    @Test
    void capabilitiesAreHonestAndFollowTheOptions() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        ConnectorCapabilities caps = connector(p, d).capabilities();
        assertEquals(Set.of(ScheduleStyle.CONTEXT_FIRST), caps.nativeStyles());
        assertEquals(Duration.ofSeconds(60), caps.engineHold());
        assertFalse(caps.decodeRenewsHold());
        assertFalse(caps.earlyRelease());
        assertEquals(AbortMode.ABORT_RPC, caps.abortMode());
        assertTrue(caps.localPrefill());
        assertFalse(caps.requestFields().contains("kv.session"));
        ConnectorCapabilities tuned = connector(p, d, "hold-seconds", "300", "abort-cleanup", "true", "max-outputs",
            "4").capabilities();
        assertEquals(Duration.ofSeconds(300), tuned.engineHold());
        assertTrue(tuned.earlyRelease());
        assertEquals(4, tuned.maxOutputs());
    }

    @Test
    void initialiseRefusesWhatTheRouteCannotHonour() {
        Endpoint grpc = Endpoint.of("p", "grpc://127.0.0.1:1");
        Endpoint http = Endpoint.of("d", "http://127.0.0.1:1");
        assertThrows(IllegalArgumentException.class, () -> service().initialise(
            new ConnectorConfig("r", "m", List.of(grpc), List.of(http), Map.of())));
        for (Map<String, String> bad : List.of(Map.of("hold-seconds", "0"), Map.of("abort-cleanup", "yes"),
            Map.of("lease", "10"), Map.of("max-outputs", "x"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> service().initialise(
                new ConnectorConfig("r", "m", List.of(grpc), List.of(grpc), bad)));
            assertTrue(e.getMessage().contains(bad.keySet().iterator().next()), e.getMessage());
        }
    }

    @Test
    void planRefusesForeignStylesAndAClientSessionBeforeSendingAnything() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        for (ScheduleStyle s : List.of(ScheduleStyle.GENERATION_FIRST, ScheduleStyle.CONCURRENT)) {
            EngineException e = assertThrows(EngineException.class, () -> conn.plan("r", s, request(4),
                endpoint("prefill-0", p), endpoint("decode-0", d)));
            assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, e.code());
            assertFalse(e.sentToEngine());
        }
        var withSession = request(4).toBuilder().setKv(KvOptions.newBuilder()
            .setSession(KvSessionRef.newBuilder().setSessionId("mine"))).build();
        EngineException e = assertThrows(EngineException.class, () -> plan(conn, "r", withSession, p, d));
        assertEquals(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, e.code());
        var many = request(4).toBuilder().setSampling(SamplingParams.newBuilder()
            .setNumSequences(2)).build();
        assertEquals(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE,
            assertThrows(EngineException.class, () -> plan(conn, "r", many, p, d)).code());
        assertEquals(0, p.stat("requests_total") + d.stat("requests_total"));
    }

    @Test
    void severalOutputsRelayWithTheirOutputIndex() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d, "max-outputs", "2");
        var two = request(5).toBuilder().setSampling(SamplingParams.newBuilder()
            .setNumSequences(2)).build();
        List<GenerateResponse> events = collect(conn.decode(ready(conn, plan(conn, "r2", two, p, d)).handoff()));
        assertEquals(2, events.stream().filter(GenerateResponse::hasFinished).count());
        assertEquals(10, events.get(events.size() - 1).getUsage().getCompletionTokens());
    }

    @Test
    void probeReadsServerInfoHealthAndLoadAndChecksTheRouteAgainstThem() {
        OpenEngineSimEngine p = engine(Role.PREFILL, c -> { });
        OpenEngineSimEngine d = engine(Role.DECODE, c -> { });
        EngineConnector conn = connector(p, d);
        ready(conn, plan(conn, "r", request(4), p, d));
        EndpointStatus s = conn.probe(endpoint("prefill-0", p)).await().atMost(WAIT);
        assertTrue(s.healthy(), s.detail());
        assertEquals(EngineRole.ENGINE_ROLE_PREFILL, s.role().orElseThrow());
        assertEquals(List.of("sim-model"), s.models());
        assertEquals(8192, s.maxContextLength().orElseThrow());
        assertEquals(1.0, s.load().get("active_kv_sessions"));
        assertTrue(s.detail().contains(p.identity().instanceId()));

        EngineConnector claimsCleanup = connector(p, d, "abort-cleanup", "true");
        EndpointStatus lying = claimsCleanup.probe(endpoint("prefill-0", p)).await().atMost(WAIT);
        assertFalse(lying.healthy());
        assertTrue(lying.detail().contains("supports_abort_cleanup=false"), lying.detail());

        p.faults().healthStatus(503);
        assertFalse(conn.probe(endpoint("prefill-0", p)).await().atMost(WAIT).healthy());
        EndpointStatus decodeStatus = conn.probe(endpoint("decode-0", d)).await().atMost(WAIT);
        assertTrue(decodeStatus.healthy(), decodeStatus.detail());
        EngineConnector swapped = connector(List.of(endpoint("p", d)), List.of(endpoint("d", p)), Map.of());
        EndpointStatus wrongPool = swapped.probe(endpoint("p", d)).await().atMost(WAIT);
        assertFalse(wrongPool.healthy());
        assertTrue(wrongPool.detail().contains("in the prefill pool"), wrongPool.detail());
        p.crash(-1);
        EndpointStatus down = conn.probe(endpoint("prefill-0", p)).await().atMost(WAIT);
        assertFalse(down.healthy());
        assertTrue(down.detail().startsWith("unreachable"));
    }
}
