package io.handoff.gateway.reaper;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.RedisSessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RecordingCleanupPort;
import io.handoff.gateway.testing.RedisServer;
import io.handoff.gateway.testing.TestRedisClients;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several gateway replicas (each its own Redis client, replica id, reaper and cleanup port) on one real Redis:
 * every obligation is discharged by exactly one of them, a replica that dies mid-cleanup is taken over, a Generate
 * runs on one replica at a time, and an outage of Redis is a clean UNAVAILABLE that heals when Redis returns.
 */
class ReplicatedReaperTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration CLAIM_TTL = Duration.ofSeconds(20);

    private static RedisServer server;
    private static TestRedisClients clients;

    private MutableClock clock;
    private String prefix;
    private final List<Replica> replicas = new ArrayList<>();

    private final class Replica {
        final String name;
        final SessionStore store;
        final RecordingCleanupPort port;
        final SessionService service;
        final CleanupExecutor cleanup;
        final Reaper reaper;

        Replica(String name) {
            this.name = name;
            this.store = new RedisSessionStore(clients.newClient(), prefix, new StoreSettings(Duration.ofMinutes(10),
                    10_000), Duration.ofSeconds(2));
            this.port = new RecordingCleanupPort(name);
            SessionMetrics metrics = new SessionMetrics(new SimpleMeterRegistry());
            this.cleanup = new CleanupExecutor(store, port, clock, metrics, 5, Duration.ofSeconds(5), CLAIM_TTL,
                    HandoffTracing.disabled());
            SessionPolicy policy = new SessionPolicy(LEASE, Duration.ofMinutes(5), Duration.ofMinutes(10), 10_000,
                    ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST), true, 256, 65536);
            this.service = new SessionService(store, policy, clock, metrics, cleanup, name, CLAIM_TTL);
            this.reaper = new Reaper(store, cleanup, clock, metrics, name, CLAIM_TTL, 64, HandoffTracing.disabled());
        }
    }

    @BeforeAll
    static void startRedis() {
        server = RedisServer.startOnFreePort();
        clients = new TestRedisClients(server);
    }

    @AfterAll
    static void stopRedis() {
        clients.close();
        server.stop();
    }

    @BeforeEach
    void replicas() {
        clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        prefix = "replicated-" + UUID.randomUUID();
        replicas.clear();
        for (String name : List.of("replica-a", "replica-b", "replica-c")) {
            replicas.add(new Replica(name));
        }
    }

    private static <T> T join(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(20));
    }

    private Session allocateWithObligations(Replica via, int i, int obligations) {
        Session s = join(via.service.allocate("t1", new AllocateCommand("req-" + i, "llama", "key-" + i,
                Optional.empty(), Optional.empty(), Optional.empty(), Struct.getDefaultInstance(), ""))).session();
        for (int o = 0; o < obligations; o++) {
            join(via.service.recordObligation("t1", s.id(), CleanupObligation.pending("leg-" + o + "@engine", "sim",
                    "http://engine-" + o, "parked-prefill-kv", Map.of("rid", s.requestId()), null, false)));
        }
        return s;
    }

    @Test
    void everyObligationIsDischargedByExactlyOneReplica() {
        List<Session> sessions = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            sessions.add(allocateWithObligations(replicas.get(i % 3), i, 2));
        }
        clock.advance(LEASE);
        List<Uni<SweepReport>> sweeps = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            for (Replica r : replicas) {
                sweeps.add(r.reaper.sweep());
            }
        }
        List<SweepReport> reports = join(Uni.join().all(sweeps).andFailFast());
        assertEquals(60, reports.stream().mapToInt(SweepReport::expired).sum(), "each session expired once");

        Map<String, Integer> discharges = new HashMap<>();
        for (Replica r : replicas) {
            for (RecordingCleanupPort.Call call : r.port.calls()) {
                discharges.merge(call.sessionId() + "/" + call.obligationId(), 1, Integer::sum);
            }
        }
        assertEquals(120, discharges.size(), "every obligation was discharged");
        assertTrue(discharges.values().stream().allMatch(n -> n == 1), "and none twice: " + discharges);
        Set<String> workers = replicas.stream().filter(r -> !r.port.calls().isEmpty()).map(r -> r.name)
                .collect(Collectors.toSet());
        assertFalse(workers.isEmpty());
        for (Session s : sessions) {
            Session now = join(replicas.get(0).store.find(s.id())).orElseThrow();
            assertEquals(SessionState.EXPIRED, now.state());
            assertTrue(now.pendingObligations().isEmpty());
        }
    }

    @Test
    void aGenerateLiveOnOneReplicaIsADuplicateOnEveryOtherUntilItEnds() {
        List<SessionStore.Allocation> first = join(Uni.join().all(replicas.stream()
                .map(r -> r.service.allocateForGenerate("t1", generateCommand("gen-1"), "")).toList()).andFailFast());
        assertEquals(1, first.stream().filter(SessionStore.Allocation::created).count());
        Session live = first.get(0).session();
        assertTrue(first.stream().allMatch(a -> a.session().id().equals(live.id())), "every replica answers it");

        join(replicas.get(0).service.transition("t1", live.id(), SessionState.FAILED, "prefill failed",
                OptionalLong.empty()));
        List<SessionStore.Allocation> retries = join(Uni.join().all(replicas.stream()
                .map(r -> r.service.allocateForGenerate("t1", generateCommand("gen-1"), "")).toList()).andFailFast());

        assertEquals(1, retries.stream().filter(SessionStore.Allocation::created).count());
        Set<String> answered = retries.stream().map(a -> a.session().id()).collect(Collectors.toSet());
        assertEquals(1, answered.size(), "one fresh attempt, whichever replica created it");
        assertFalse(answered.contains(live.id()));
    }

    private static AllocateCommand generateCommand(String requestId) {
        return new AllocateCommand(requestId, "llama", "", Optional.empty(), Optional.empty(), Optional.empty(),
                Struct.getDefaultInstance(), "");
    }

    @Test
    void aReplicaThatDiesMidCleanupIsTakenOverAfterItsClaimRunsOut() {
        Replica dying = replicas.get(0);
        Replica survivor = replicas.get(1);
        Session s = allocateWithObligations(dying, 1, 1);
        dying.port.answerAlways(o -> Uni.createFrom().nothing());
        clock.advance(LEASE);
        SessionStore.ReapStep step = join(dying.store.reap(s.id(), clock.instant(), dying.name, CLAIM_TTL));
        assertEquals(SessionStore.ReapStep.Kind.EXPIRED, step.kind());
        long deadToken = step.claim().token();
        // dying never completes; before its claim runs out nobody else touches the cleanup
        assertEquals(0, join(survivor.reaper.sweep()).cleanupsClaimed());
        clock.advance(CLAIM_TTL);
        assertEquals(1, join(survivor.reaper.sweep()).cleanupsClaimed());
        assertEquals(1, survivor.port.callsFor(s.id()).size());
        assertTrue(join(survivor.store.find(s.id())).orElseThrow().pendingObligations().isEmpty());
        // the dead replica wakes up: its write-back is fenced off
        assertFalse(join(dying.store.completeCleanup(s.id(), deadToken, step.claim().obligations(),
                clock.instant(), null, clock.instant())));
    }

    @Test
    void aRedisOutageIsUnavailableAndServiceResumesWhenRedisReturns() {
        Replica r = replicas.get(0);
        Session before = allocateWithObligations(r, 1, 0);
        server.stop();
        try {
            SessionException down = assertThrows(SessionException.class, () -> join(r.service.allocate("t1",
                    new AllocateCommand("req-x", "llama", "key-x", Optional.empty(), Optional.empty(),
                            Optional.empty(), Struct.getDefaultInstance(), ""))));
            assertEquals(SessionFailure.STORE_UNAVAILABLE, down.failure());
            SessionException getDown = assertThrows(SessionException.class,
                    () -> join(r.service.get("t1", before.id())));
            assertEquals(SessionFailure.STORE_UNAVAILABLE, getDown.failure());
        } finally {
            server.start();
        }
        // the data died with the server (it never persists); the service itself is back
        Session after = allocateWithObligations(r, 2, 0);
        assertEquals(SessionState.ALLOCATED, join(r.service.get("t1", after.id())).state());
        join(r.service.release("t1", after.id(), "", OptionalLong.empty()));
    }
}
