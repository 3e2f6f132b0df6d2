package io.handoff.gateway.orchestration;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.reaper.CleanupExecutor;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.SessionPolicy;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.store.InMemorySessionStore;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RecordingCleanupPort;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a run's ledger leaves in the store when the run could not write the session's end itself (the store refused
 * the write, or the session ended elsewhere): whoever ends the session later discharges exactly what is still owed.
 */
class HeldLedgerTest {

    private static final Duration CLAIM_TTL = Duration.ofSeconds(20);

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-06T10:00:00Z"));
    private final SessionStore store = new InMemorySessionStore(new StoreSettings(Duration.ofMinutes(10), 10_000));
    private final RecordingCleanupPort engines = new RecordingCleanupPort();
    private final SessionService sessions;

    HeldLedgerTest() {
        SessionMetrics metrics = new SessionMetrics(new SimpleMeterRegistry());
        CleanupExecutor cleanup = new CleanupExecutor(store, engines, clock, metrics, 5, Duration.ofSeconds(5),
                CLAIM_TTL, HandoffTracing.disabled());
        SessionPolicy policy = new SessionPolicy(Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofMinutes(10),
                100, ScheduleStyle.CONTEXT_FIRST, Set.of(ScheduleStyle.CONTEXT_FIRST), true, 256, 65536);
        sessions = new SessionService(store, policy, clock, metrics, cleanup, "replica-a", CLAIM_TTL);
    }

    @Test
    void aHoldItsLegsAbortReleasedIsNotDischargedAgainWhenTheEndWasNotWritten() {
        Session session = allocate("req-1");
        HeldLedger ledger = new HeldLedger(sessions, "t1", session, "route-a", "req-1");
        ledger.note(List.of(prefillHold("rid-p")));
        join(ledger.record());
        assertEquals(CleanupObligation.Status.PENDING, obligation(session).status(), "written as owed");

        ledger.releasedByAbort(h -> true); // the leg's native abort was the hold's discharge
        List<CleanupObligation> settled = join(ledger.closing());
        ledger.endNotWritten(settled); // the run's end write failed
        Awaitility.await("the settled hold written").atMost(Duration.ofSeconds(10))
                .until(() -> obligation(session).status() == CleanupObligation.Status.DISCHARGED);

        // the session ends elsewhere (its lease runs out, another replica fails it): nothing is left to discharge
        join(sessions.transition("t1", session.id(), SessionState.FAILED, "ended elsewhere", OptionalLong.empty()));
        assertEquals(List.of(), engines.calls());
        assertEquals(CleanupObligation.Status.DISCHARGED, obligation(session).status());
    }

    @Test
    void aHoldStillOwedIsDischargedOnceByWhoeverEndsTheSession() {
        Session session = allocate("req-2");
        HeldLedger ledger = new HeldLedger(sessions, "t1", session, "route-a", "req-2");
        ledger.note(List.of(prefillHold("rid-2-p")));
        ledger.endNotWritten(join(ledger.closing()));
        Awaitility.await("the hold written").atMost(Duration.ofSeconds(10))
                .until(() -> !join(store.find(session.id())).orElseThrow().obligations().isEmpty());

        join(sessions.transition("t1", session.id(), SessionState.FAILED, "ended elsewhere", OptionalLong.empty()));
        Awaitility.await("discharged by the end").atMost(Duration.ofSeconds(10))
                .until(() -> obligation(session).status() == CleanupObligation.Status.DISCHARGED);
        assertEquals(1, engines.callsFor(session.id()).size());
    }

    /**
     * The abort ends the leg, and the leg reports what it held as it ends: its failure names the same hold again,
     * after the abort answered. Noted anew, the hold lost its settlement and the session's end discharged it again.
     */
    @Test
    void aHoldReportedAgainAfterItsLegsAbortAnsweredStaysSettled() {
        Session session = allocate("req-3");
        HeldLedger ledger = new HeldLedger(sessions, "t1", session, "route-a", "req-3");
        ledger.note(List.of(prefillHold("rid-3-p")));
        join(ledger.record());
        ledger.releasedByAbort(h -> "rid-3-p".equals(h.handle().get("rid")));
        ledger.note(List.of(prefillHold("rid-3-p"))); // the failed leg's report

        join(sessions.end("t1", session.id(), SessionState.FAILED, "cancelled", OptionalLong.empty(),
                join(ledger.closing())));
        assertEquals(List.of(), engines.calls());
        assertEquals(CleanupObligation.Status.DISCHARGED, obligation(session).status());
    }

    /** A cancelled prefill's possible hold is noted when its subscription is cancelled, which can be after the end. */
    @Test
    void aHoldNotedAfterTheEndAndItsLegsAbortIsRecordedDischarged() {
        Session session = allocate("req-4");
        HeldLedger ledger = new HeldLedger(sessions, "t1", session, "route-a", "req-4");
        ledger.releasedByAbort(h -> "rid-4-p".equals(h.handle().get("rid")));
        join(sessions.end("t1", session.id(), SessionState.FAILED, "cancelled", OptionalLong.empty(),
                join(ledger.closing())));

        ledger.note(List.of(prefillHold("rid-4-p")));
        Awaitility.await("the late hold written").atMost(Duration.ofSeconds(10))
                .until(() -> !join(store.find(session.id())).orElseThrow().obligations().isEmpty());
        assertEquals(CleanupObligation.Status.DISCHARGED, obligation(session).status());
        ledger.note(List.of(new HeldKv("decode@decode-0", new Endpoint("decode-0", URI.create("http://decode-0")),
                "decode-preallocated-kv", Map.of("rid", "rid-4-d"), null, true))); // not what the abort named
        Awaitility.await("the other hold written").atMost(Duration.ofSeconds(10))
                .until(() -> join(store.find(session.id())).orElseThrow().obligations().size() == 2);
        assertEquals(List.of("decode@decode-0"), join(store.find(session.id())).orElseThrow().pendingObligations()
                .stream().map(CleanupObligation::id).toList(), "owed as before");
    }

    private Session allocate(String requestId) {
        return join(sessions.allocate("t1", new AllocateCommand(requestId, "llama", "key-" + requestId,
                Optional.empty(), Optional.empty(), Optional.empty(), Struct.getDefaultInstance(), ""))).session();
    }

    private static HeldKv prefillHold(String rid) {
        return new HeldKv("prefill@prefill-0", new Endpoint("prefill-0", URI.create("http://prefill-0")),
                "prefill-bootstrap-kv", Map.of("rid", rid), null, true);
    }

    private CleanupObligation obligation(Session session) {
        return join(store.find(session.id())).orElseThrow().obligations().get(0);
    }

    private static <T> T join(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(10));
    }
}
