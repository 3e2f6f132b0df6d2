package io.handoff.gateway.reaper;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import io.handoff.gateway.session.SessionIds;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.RedisDeployment;
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
import org.awaitility.Awaitility;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
                    10_000), Duration.ofSeconds(2), RedisDeployment.SINGLE_NODE);
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

    /**
     * A bucket's due sessions are acted on one after another. When the first one's discharge is slow, the claim on
     * the second must still run its whole TTL from when it was taken: stamped with the sweep's start, it ran out while
     * its discharge was still in flight, and another replica discharged the same KV again.
     */
    @Test
    void aClaimTakenLateInASweepRunsItsWholeTimeFromWhenItWasTaken() throws Exception {
        Replica sweeping = replicas.get(0);
        Replica other = replicas.get(1);
        List<Session> pair = twoInOneBucket(sweeping);
        CompletableFuture<DischargeResult> secondAnswer = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        sweeping.port.answerAlways(o -> {
            if (calls.incrementAndGet() == 1) {
                clock.advance(CLAIM_TTL.multipliedBy(9).dividedBy(10)); // the first discharge is slow
                return Uni.createFrom().item(DischargeResult.released());
            }
            return Uni.createFrom().completionStage(secondAnswer);
        });
        clock.advance(LEASE);
        CompletableFuture<SweepReport> sweep = sweeping.reaper.sweep().subscribeAsCompletionStage();
        Awaitility.await("the second discharge under way").atMost(Duration.ofSeconds(20))
                .until(() -> calls.get() == 2);

        // past the sweep's start plus a claim's TTL, within the second claim's own
        clock.advance(CLAIM_TTL.dividedBy(5));
        assertEquals(0, join(other.reaper.sweep()).cleanupsClaimed(), "nobody takes over a claim still running");
        secondAnswer.complete(DischargeResult.released());
        assertEquals(2, sweep.get(20, TimeUnit.SECONDS).expired());

        assertEquals(List.of(), other.port.calls());
        for (Session s : pair) {
            assertEquals(1, sweeping.port.callsFor(s.id()).size(), "discharged once: " + s.id());
            assertTrue(join(sweeping.store.find(s.id())).orElseThrow().pendingObligations().isEmpty());
        }
    }

    /**
     * The obligations of one claim are discharged together: each engine call is bounded to fit in the claim, and one
     * after another they would not. Here neither engine answers until both were asked; in turn, the sweep never ends.
     */
    @Test
    void aClaimsObligationsAreDischargedTogether() {
        Replica r = replicas.get(0);
        Session s = allocateWithObligations(r, 1, 2);
        CompletableFuture<DischargeResult> bothAsked = new CompletableFuture<>();
        AtomicInteger asked = new AtomicInteger();
        r.port.answerAlways(o -> {
            if (asked.incrementAndGet() == 2) {
                bothAsked.complete(DischargeResult.released());
            }
            return Uni.createFrom().completionStage(bothAsked);
        });
        clock.advance(LEASE);
        assertEquals(1, join(r.reaper.sweep()).expired());
        assertEquals(2, r.port.callsFor(s.id()).size());
        assertTrue(join(r.store.find(s.id())).orElseThrow().pendingObligations().isEmpty());
    }

    /** Two sessions with one obligation each whose ids fall in one index bucket; the others allocated are released. */
    private List<Session> twoInOneBucket(Replica via) {
        Map<Integer, Session> byBucket = new HashMap<>();
        for (int i = 0; ; i++) {
            Session s = allocateWithObligations(via, 1000 + i, 0);
            Session earlier = byBucket.putIfAbsent(SessionIds.bucketOf(s.id()), s);
            if (earlier != null) {
                for (Session released : byBucket.values()) {
                    if (released != earlier) {
                        join(via.service.release("t1", released.id(), "", OptionalLong.empty()));
                    }
                }
                List<Session> pair = List.of(earlier, s);
                for (Session p : pair) {
                    join(via.service.recordObligation("t1", p.id(), CleanupObligation.pending("leg@engine", "sim",
                            "http://engine", "parked-prefill-kv", Map.of("rid", p.requestId()), null, false)));
                }
                return pair;
            }
        }
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
