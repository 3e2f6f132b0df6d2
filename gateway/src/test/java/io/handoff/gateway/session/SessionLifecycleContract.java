package io.handoff.gateway.session;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.reaper.CleanupExecutor;
import io.handoff.gateway.reaper.Reaper;
import io.handoff.gateway.reaper.SweepReport;
import io.handoff.gateway.session.SessionMetrics;
import io.handoff.gateway.session.store.SessionStore.Allocation;
import io.handoff.gateway.session.store.SessionStore.DueEntry;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.session.store.StoreSettings;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.testing.MutableClock;
import io.handoff.gateway.testing.RecordingCleanupPort;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.smallrye.mutiny.Uni;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The session lifecycle every store must honour, run against each store (Apicurio's abstract storage test).
 * Time only moves when a test moves the clock; the reaper runs when a test sweeps.
 */
public abstract class SessionLifecycleContract {

    protected static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    protected static final Duration MAX_LEASE = Duration.ofMinutes(5);
    protected static final Duration RETENTION = Duration.ofMinutes(10);
    protected static final Duration CLAIM_TTL = Duration.ofSeconds(20);
    protected static final Duration RETRY_BACKOFF = Duration.ofSeconds(5);
    protected static final int MAX_LIVE = 5;
    protected static final int MAX_ATTEMPTS = 3;

    protected MutableClock clock;
    protected RecordingCleanupPort port;
    protected SessionStore store;
    protected SessionService service;
    protected Reaper reaper;
    protected InMemorySpanExporter spans;

    /** A fresh store that sees none of the data of other tests. */
    protected abstract SessionStore newStore(StoreSettings settings);

    protected SessionPolicy policy() {
        return new SessionPolicy(DEFAULT_LEASE, MAX_LEASE, RETENTION, MAX_LIVE, ScheduleStyle.CONTEXT_FIRST,
                Set.of(ScheduleStyle.CONTEXT_FIRST, ScheduleStyle.GENERATION_FIRST), true, 256, 1024);
    }

    @BeforeEach
    void wire() {
        clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        port = new RecordingCleanupPort("replica-a");
        SessionPolicy policy = policy();
        store = newStore(new StoreSettings(policy.tombstoneRetention(), policy.maxLivePerTenant()));
        SessionMetrics metrics = new SessionMetrics(new SimpleMeterRegistry());
        spans = InMemorySpanExporter.create();
        HandoffTracing tracing = new HandoffTracing(OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans))
                        .build())
                .build());
        CleanupExecutor cleanup = new CleanupExecutor(store, port, clock, metrics, MAX_ATTEMPTS, RETRY_BACKOFF,
                CLAIM_TTL, tracing);
        service = new SessionService(store, policy, clock, metrics, cleanup, "replica-a", CLAIM_TTL);
        reaper = new Reaper(store, cleanup, clock, metrics, "replica-a", CLAIM_TTL, 100, tracing);
    }

    // ---------------------------------------------------------------- helpers

    protected static <T> T join(Uni<T> uni) {
        return uni.await().atMost(Duration.ofSeconds(10));
    }

    protected static SessionException refused(SessionFailure expected, Supplier<Uni<?>> call) {
        SessionException e = assertThrows(SessionException.class, () -> join(call.get()));
        assertEquals(expected, e.failure(), e.getMessage());
        return e;
    }

    protected static AllocateCommand command(String requestId, String key) {
        return new AllocateCommand(requestId, "llama", key, Optional.empty(), Optional.empty(), Optional.empty(),
                Struct.getDefaultInstance(), "");
    }

    protected Session allocate(String tenant, String key) {
        return join(service.allocate(tenant, command("req-" + key, key))).session();
    }

    /** A Generate's session: the request id is its key, so the command carries no idempotency key of its own. */
    protected Allocation generate(String tenant, String requestId) {
        return join(service.allocateForGenerate(tenant, command(requestId, ""), ""));
    }

    protected SweepReport sweep() {
        return join(reaper.sweep());
    }

    protected long stored() {
        return join(store.countByState()).values().stream().mapToLong(Long::longValue).sum();
    }

    protected Session reload(String id) {
        return join(store.find(id)).orElseThrow();
    }

    protected Session obligate(Session s, String obligationId, Instant heldUntil) {
        return join(service.recordObligation(s.tenant(), s.id(), CleanupObligation.pending(obligationId, "sim",
                "http://p-0", "parked-prefill-kv", Map.of("rid", s.requestId()), heldUntil, false)));
    }

    // ---------------------------------------------------------------- allocate

    @Test
    void allocationNeedsRequestIdModelAndKeyAndWritesNothingWithoutThem() {
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", command("", "k")));
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", command("r", "")));
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", new AllocateCommand("r", "", "k",
                Optional.empty(), Optional.empty(), Optional.empty(), Struct.getDefaultInstance(), "")));
        assertEquals(0, stored());
        assertEquals(0, join(store.countLive("t1", clock.instant())));
    }

    @Test
    void allocationAnswersResolvedDefaultsAndAbsoluteExpiry() {
        Allocation a = join(service.allocate("t1", command("r1", "k1")));
        assertTrue(a.created());
        Session s = a.session();
        assertEquals(SessionState.ALLOCATED, s.state());
        assertEquals(1, s.epoch());
        assertEquals(ScheduleStyle.CONTEXT_FIRST, s.style());
        assertEquals(TransferDisposition.REQUIRED, s.disposition());
        assertEquals(DEFAULT_LEASE, s.lease());
        assertEquals(clock.instant().plus(DEFAULT_LEASE), s.leaseExpiresAt());
        assertTrue(SessionIds.isWellFormed(s.id()));
        assertEquals(s, reload(s.id()));
    }

    @Test
    void identicalRetryReturnsTheSameSessionAndConflictingReuseChangesNothing() {
        Session first = allocate("t1", "k1");
        clock.advance(Duration.ofSeconds(1));
        Allocation retry = join(service.allocate("t1", command("req-k1", "k1")));
        assertFalse(retry.created());
        assertEquals(first.id(), retry.session().id());

        refused(SessionFailure.IDEMPOTENCY_CONFLICT, () -> service.allocate("t1", command("another-request", "k1")));
        assertEquals(1, stored());
        assertEquals(first, reload(first.id()));
    }

    @Test
    void identicalRetryAfterTheSessionEndedReturnsItsTombstone() {
        Session first = allocate("t1", "k1");
        join(service.release("t1", first.id(), "done", OptionalLong.empty()));
        Allocation retry = join(service.allocate("t1", command("req-k1", "k1")));
        assertFalse(retry.created());
        assertEquals(first.id(), retry.session().id());
        assertEquals(SessionState.RELEASED, retry.session().state());
    }

    @Test
    void idempotencyKeysBelongToOneTenant() {
        Session a = allocate("t1", "shared-key");
        Session b = allocate("t2", "shared-key");
        assertNotEquals(a.id(), b.id());
        assertEquals("t2", b.tenant());
    }

    @Test
    void sixteenConcurrentIdenticalAllocationsCreateExactlyOneSession() {
        List<Uni<Allocation>> racing = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            racing.add(service.allocate("t1", command("req-race", "race")));
        }
        List<Allocation> results = join(Uni.join().all(racing).andFailFast());
        assertEquals(1, results.stream().filter(Allocation::created).count());
        assertEquals(1, results.stream().map(a -> a.session().id()).distinct().count());
        assertEquals(1, stored());
    }

    @Test
    void unspecifiedStyleTakesTheDefaultAndAnUnsupportedExplicitStyleIsRefusedBeforeAllocation() {
        AllocateCommand generationFirst = new AllocateCommand("r", "llama", "k-gen",
                Optional.of(ScheduleStyle.GENERATION_FIRST), Optional.empty(), Optional.empty(),
                Struct.getDefaultInstance(), "");
        assertEquals(ScheduleStyle.GENERATION_FIRST, join(service.allocate("t1", generationFirst)).session().style());

        AllocateCommand concurrent = new AllocateCommand("r2", "llama", "k-conc",
                Optional.of(ScheduleStyle.CONCURRENT), Optional.empty(), Optional.empty(),
                Struct.getDefaultInstance(), "");
        refused(SessionFailure.UNSUPPORTED, () -> service.allocate("t1", concurrent));
        assertEquals(1, stored());
    }

    @Test
    void leasesAreValidatedAndNeverImmortal() {
        for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-1))) {
            refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", new AllocateCommand("r", "m", "k",
                    Optional.empty(), Optional.empty(), Optional.of(bad), Struct.getDefaultInstance(), "")));
        }
        refused(SessionFailure.LEASE_OUT_OF_RANGE, () -> service.allocate("t1", new AllocateCommand("r", "m", "k",
                Optional.empty(), Optional.empty(), Optional.of(MAX_LEASE.plusMillis(1)),
                Struct.getDefaultInstance(), "")));
        assertEquals(0, stored());
        Session s = join(service.allocate("t1", new AllocateCommand("r", "m", "k", Optional.empty(),
                Optional.empty(), Optional.of(MAX_LEASE), Struct.getDefaultInstance(), ""))).session();
        assertEquals(clock.instant().plus(MAX_LEASE), s.leaseExpiresAt());
    }

    @Test
    void oversizedIdsAndAttributesAreRefusedAndWriteNothing() {
        String longId = "x".repeat(257);
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", command(longId, "k")));
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", command("r", longId)));
        Struct big = Struct.newBuilder().putFields("blob", Value.newBuilder().setStringValue("y".repeat(2000))
                .build()).build();
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.allocate("t1", new AllocateCommand("r", "m", "k",
                Optional.empty(), Optional.empty(), Optional.empty(), big, "")));
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.get("t1", longId));
        assertEquals(0, stored());
    }

    @Test
    void attributesRoundTrip() {
        Struct attrs = Struct.newBuilder().putFields("framework", Value.newBuilder().setStringValue("dynamo").build())
                .putFields("rank", Value.newBuilder().setNumberValue(3).build()).build();
        Session s = join(service.allocate("t1", new AllocateCommand("r", "m", "k", Optional.empty(),
                Optional.empty(), Optional.empty(), attrs, ""))).session();
        assertEquals(attrs, reload(s.id()).attributes());
    }

    @Test
    void aTenantAtItsQuotaIsRefusedUntilASessionEnds() {
        List<Session> live = new ArrayList<>();
        for (int i = 0; i < MAX_LIVE; i++) {
            live.add(allocate("t1", "q" + i));
        }
        refused(SessionFailure.QUOTA_EXCEEDED, () -> service.allocate("t1", command("r", "one-too-many")));
        assertEquals(MAX_LIVE, stored());
        allocate("t2", "other-tenant-unaffected");
        join(service.release("t1", live.get(0).id(), "", OptionalLong.empty()));
        allocate("t1", "fits-again");
    }

    // ---------------------------------------------------------------- Generate sessions

    @Test
    void aLiveGenerateRequestIdAnswersItsLiveSessionWhateverElseTheRetryAsks() {
        Allocation first = generate("t1", "gen-1");
        assertTrue(first.created());
        assertEquals(SessionService.GENERATE_KEY_PREFIX + "gen-1", first.session().idempotencyKey());
        join(service.transition("t1", first.session().id(), SessionState.ATTACHED, "decoding",
                OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(1));
        AllocateCommand otherModel = new AllocateCommand("gen-1", "other-model", "", Optional.empty(),
                Optional.empty(), Optional.empty(), Struct.getDefaultInstance(), "");

        Allocation duplicate = join(service.allocateForGenerate("t1", otherModel, ""));

        assertFalse(duplicate.created());
        assertEquals(first.session().id(), duplicate.session().id());
        assertEquals(SessionState.ATTACHED, duplicate.session().state());
        assertEquals(1, stored());
    }

    @Test
    void aGenerateRetriedAfterItsAttemptFailedGetsAFreshSession() {
        Session failed = generate("t1", "gen-1").session();
        join(service.transition("t1", failed.id(), SessionState.FAILED, "prefill failed", OptionalLong.empty()));

        assertFreshAttemptReplaces(failed);
    }

    @Test
    void aGenerateRetriedAfterItsSessionWasReleasedGetsAFreshSession() {
        Session released = generate("t1", "gen-1").session();
        join(service.release("t1", released.id(), "client gone", OptionalLong.empty()));

        assertFreshAttemptReplaces(released);
    }

    @Test
    void aGenerateRetriedAfterTheReaperExpiredItsSessionGetsAFreshSession() {
        Session lapsed = generate("t1", "gen-1").session();
        clock.advance(DEFAULT_LEASE);
        assertEquals(1, sweep().expired());

        assertFreshAttemptReplaces(lapsed);
    }

    @Test
    void aLeaseThatRanOutHasEndedTheAttemptBeforeTheReaperNoticesIt() {
        Session lapsed = generate("t1", "gen-1").session();
        clock.advance(DEFAULT_LEASE);

        Session fresh = assertFreshAttemptReplaces(lapsed);

        assertEquals(1, sweep().expired());
        assertEquals(SessionState.EXPIRED, reload(lapsed.id()).state());
        Allocation again = generate("t1", "gen-1");
        assertFalse(again.created(), "expiring the old attempt leaves the key with the new one");
        assertEquals(fresh.id(), again.session().id());
    }

    /** The ended attempt is kept as a tombstone; the key now answers the new, live one. */
    private Session assertFreshAttemptReplaces(Session ended) {
        Session endedNow = reload(ended.id());
        Allocation retry = generate("t1", ended.requestId());
        assertTrue(retry.created());
        Session fresh = retry.session();
        assertNotEquals(ended.id(), fresh.id());
        assertEquals(SessionState.ALLOCATED, fresh.state());
        assertEquals(1, fresh.epoch());
        assertEquals(endedNow, reload(ended.id()), "the ended attempt is left as it was");

        Allocation duplicate = generate("t1", ended.requestId());
        assertFalse(duplicate.created());
        assertEquals(fresh.id(), duplicate.session().id());
        assertEquals(2, stored());
        return fresh;
    }

    @Test
    void concurrentGeneratesOfOneNewRequestIdCreateExactlyOneSession() {
        List<Allocation> results = join(Uni.join().all(List.of(
                service.allocateForGenerate("t1", command("gen-race", ""), ""),
                service.allocateForGenerate("t1", command("gen-race", ""), ""))).andFailFast());

        assertEquals(1, results.stream().filter(Allocation::created).count());
        assertEquals(1, results.stream().map(a -> a.session().id()).distinct().count());
        assertEquals(1, stored());
    }

    @Test
    void concurrentRetriesOfAnEndedGenerateCreateExactlyOneFreshSession() {
        Session failed = generate("t1", "gen-race").session();
        join(service.transition("t1", failed.id(), SessionState.FAILED, "decode failed", OptionalLong.empty()));
        List<Uni<Allocation>> racing = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            racing.add(service.allocateForGenerate("t1", command("gen-race", ""), ""));
        }

        List<Allocation> results = join(Uni.join().all(racing).andFailFast());

        assertEquals(1, results.stream().filter(Allocation::created).count());
        Set<String> answered = results.stream().map(a -> a.session().id()).collect(Collectors.toSet());
        assertEquals(1, answered.size());
        assertFalse(answered.contains(failed.id()));
        assertEquals(2, stored());
    }

    @Test
    void purgingTheReplacedTombstoneLeavesTheKeyWithTheNewAttempt() {
        Session failed = generate("t1", "gen-1").session();
        join(service.transition("t1", failed.id(), SessionState.FAILED, "prefill failed", OptionalLong.empty()));
        clock.advance(RETENTION.minusMillis(1));
        Session fresh = generate("t1", "gen-1").session();
        clock.advance(Duration.ofMillis(1));

        assertEquals(1, sweep().purged());

        assertTrue(join(store.find(failed.id())).isEmpty());
        Allocation duplicate = generate("t1", "gen-1");
        assertFalse(duplicate.created(), "the purge must not free the key the new attempt holds");
        assertEquals(fresh.id(), duplicate.session().id());
        assertEquals(1, stored());
    }

    @Test
    void aFreshAttemptCountsAgainstTheQuotaAndTheEndedOneNoLonger() {
        Session failed = generate("t1", "gen-1").session();
        for (int i = 1; i < MAX_LIVE; i++) {
            allocate("t1", "q" + i);
        }
        refused(SessionFailure.QUOTA_EXCEEDED, () -> service.allocateForGenerate("t1", command("gen-2", ""), ""));
        join(service.transition("t1", failed.id(), SessionState.FAILED, "prefill failed", OptionalLong.empty()));

        assertTrue(generate("t1", "gen-1").created());

        refused(SessionFailure.QUOTA_EXCEEDED, () -> service.allocateForGenerate("t1", command("gen-2", ""), ""));
        assertEquals(MAX_LIVE, join(store.countLive("t1", clock.instant())));
    }

    /**
     * The quota counts leases that still run: a renewed session keeps counting, one whose lease ran out stops counting
     * at once, before the reaper ends it, and never counts again.
     */
    @Test
    void theQuotaCountsRunningLeasesOnly() {
        Session renewed = allocate("t1", "renewed");
        for (int i = 1; i < MAX_LIVE; i++) {
            allocate("t1", "q" + i);
        }
        refused(SessionFailure.QUOTA_EXCEEDED, () -> service.allocate("t1", command("r", "one-too-many")));
        clock.advance(DEFAULT_LEASE.minusSeconds(1));
        join(service.renew("t1", renewed.id(), Optional.empty(), OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(1));

        assertEquals(1, join(store.countLive("t1", clock.instant())), "only the renewed lease still runs");
        for (int i = 1; i < MAX_LIVE; i++) {
            allocate("t1", "after-expiry-" + i);
        }
        refused(SessionFailure.QUOTA_EXCEEDED, () -> service.allocate("t1", command("r", "one-too-many-again")));
        assertEquals(MAX_LIVE, join(store.countLive("t1", clock.instant())));
        assertEquals(2L * MAX_LIVE - 1, join(store.countByState()).get(SessionState.ALLOCATED),
                "the expired ones are still stored, and still ALLOCATED until the reaper runs");
    }

    @Test
    void clientsCannotUseTheGenerateKeyNamespace() {
        SessionException refusal = refused(SessionFailure.INVALID_ARGUMENT,
                () -> service.allocate("t1", command("req-x", SessionService.GENERATE_KEY_PREFIX + "x")));
        assertTrue(refusal.getMessage().contains("reserved"), refusal.getMessage());
        assertEquals(0, stored());
        assertEquals(0, join(store.countLive("t1", clock.instant())));
    }

    // ---------------------------------------------------------------- get, renew, release

    @Test
    void unknownAndForeignSessionsAnswerTheSameNotFound() {
        Session mine = allocate("t1", "k1");
        refused(SessionFailure.INVALID_ARGUMENT, () -> service.get("t1", ""));
        SessionException unknown = refused(SessionFailure.NOT_FOUND, () -> service.get("t1", SessionIds.mint()));
        SessionException foreign = refused(SessionFailure.NOT_FOUND, () -> service.get("t2", mine.id()));
        assertEquals(unknown.getMessage(), foreign.getMessage());
        refused(SessionFailure.NOT_FOUND, () -> service.get("t1", "not-an-id"));
        refused(SessionFailure.NOT_FOUND, () -> service.renew("t2", mine.id(), Optional.empty(),
                OptionalLong.empty()));
        refused(SessionFailure.NOT_FOUND, () -> service.release("t2", mine.id(), "", OptionalLong.empty()));
        assertEquals(mine, reload(mine.id()));
    }

    @Test
    void renewExtendsALiveLeaseIncludingAWaitingRendezvous() {
        Session s = allocate("t1", "k1");
        join(service.transition("t1", s.id(), SessionState.ATTACHED, "decode waiting", OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(20));
        Session renewed = join(service.renew("t1", s.id(), Optional.of(Duration.ofSeconds(60)),
                OptionalLong.empty()));
        assertEquals(clock.instant().plusSeconds(60), renewed.leaseExpiresAt());
        assertEquals(1, renewed.renewals());
        assertEquals(SessionState.ATTACHED, renewed.state());
        assertEquals(2, renewed.epoch(), "a renewal is not a transition");
        refused(SessionFailure.STALE_EPOCH, () -> service.renew("t1", s.id(), Optional.empty(), OptionalLong.of(1)));
        refused(SessionFailure.LEASE_OUT_OF_RANGE, () -> service.renew("t1", s.id(),
                Optional.of(MAX_LEASE.plusSeconds(1)), OptionalLong.empty()));
        assertEquals(renewed, reload(s.id()));
    }

    @Test
    void renewingATerminalOrLapsedSessionChangesNothing() {
        Session ended = allocate("t1", "k1");
        join(service.release("t1", ended.id(), "", OptionalLong.empty()));
        Session before = reload(ended.id());
        refused(SessionFailure.NOT_LIVE, () -> service.renew("t1", ended.id(), Optional.empty(), OptionalLong.empty()));
        assertEquals(before, reload(ended.id()));

        Session lapsed = allocate("t1", "k2");
        clock.advance(DEFAULT_LEASE);
        refused(SessionFailure.NOT_LIVE, () -> service.renew("t1", lapsed.id(), Optional.empty(),
                OptionalLong.empty()));
        assertEquals(lapsed, reload(lapsed.id()));
    }

    @Test
    void releaseIsIdempotentAndQueuesCleanup() {
        Session s = allocate("t1", "k1");
        obligate(s, "prefill@p-0", null);
        SessionService.Released first = join(service.release("t1", s.id(), "client done", OptionalLong.of(1)));
        assertFalse(first.alreadyTerminal());
        assertEquals(SessionState.RELEASED, first.session().state());
        assertEquals(2, first.session().epoch());
        assertEquals("client done", first.session().terminalReason());
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> port.callsFor(s.id()).size() == 1);
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> reload(s.id()).pendingObligations().isEmpty());

        SessionService.Released again = join(service.release("t1", s.id(), "retry", OptionalLong.of(1)));
        assertTrue(again.alreadyTerminal());
        assertEquals(SessionState.RELEASED, again.session().state());
        assertEquals(2, again.session().epoch());
        assertEquals("client done", again.session().terminalReason());
        sweep();
        assertEquals(1, port.callsFor(s.id()).size(), "cleanup is discharged once");
    }

    @Test
    void tombstonesStayForTheRetentionThenVanishAndFreeTheKey() {
        Session s = allocate("t1", "k1");
        join(service.release("t1", s.id(), "", OptionalLong.empty()));
        clock.advance(RETENTION.minusMillis(1));
        sweep();
        assertEquals(SessionState.RELEASED, join(service.get("t1", s.id())).state());
        clock.advance(Duration.ofMillis(1));
        SweepReport report = sweep();
        assertEquals(1, report.purged());
        refused(SessionFailure.NOT_FOUND, () -> service.get("t1", s.id()));
        assertEquals(0, stored());
        Allocation fresh = join(service.allocate("t1", command("req-k1", "k1")));
        assertTrue(fresh.created());
        assertNotEquals(s.id(), fresh.session().id());
    }

    // ---------------------------------------------------------------- transitions

    private static final Map<SessionState, List<SessionState>> PATH = Map.of(
            SessionState.ALLOCATED, List.of(),
            SessionState.READY, List.of(SessionState.READY),
            SessionState.ATTACHED, List.of(SessionState.ATTACHED),
            SessionState.COMPLETE, List.of(SessionState.ATTACHED, SessionState.COMPLETE),
            SessionState.BYPASSED, List.of(SessionState.BYPASSED),
            SessionState.REJECTED, List.of(SessionState.REJECTED),
            SessionState.CANCELLED, List.of(SessionState.CANCELLED),
            SessionState.FAILED, List.of(SessionState.FAILED),
            SessionState.RELEASED, List.of(SessionState.RELEASED),
            SessionState.EXPIRED, List.of(SessionState.EXPIRED));

    /** The moves the proposal's flows need, written out independently of {@link SessionTransitions}. */
    private static boolean expectedLegal(SessionState from, SessionState to) {
        if (from.isTerminal() || to == SessionState.ALLOCATED) {
            return false;
        }
        return switch (to) {
            case READY -> from == SessionState.ALLOCATED;
            case ATTACHED -> from == SessionState.ALLOCATED || from == SessionState.READY;
            case COMPLETE -> from == SessionState.ATTACHED;
            case BYPASSED -> from == SessionState.ALLOCATED;
            case REJECTED -> from != SessionState.ATTACHED;
            default -> true;
        };
    }

    @Test
    void everyPairOfStatesIsLegalExactlyWhenTheTableSaysAndEachMoveIsOneFencedStep() {
        int n = 0;
        for (SessionState from : SessionState.values()) {
            for (SessionState to : SessionState.values()) {
                Session s = join(service.allocate("walk", command("r" + n, "walk-" + n))).session();
                n++;
                for (SessionState step : PATH.get(from)) {
                    join(service.transition("walk", s.id(), step, "path", OptionalLong.empty()));
                }
                Session at = reload(s.id());
                assertEquals(from, at.state());
                boolean legal = expectedLegal(from, to);
                assertEquals(legal, SessionTransitions.isLegal(from, to), from + " -> " + to);
                if (legal) {
                    Session moved = join(service.transition("walk", s.id(), to, "test", OptionalLong.of(at.epoch())))
                            .session();
                    assertEquals(to, moved.state(), from + " -> " + to);
                    assertEquals(at.epoch() + 1, moved.epoch());
                } else {
                    SessionException e = assertThrows(SessionException.class, () -> join(service.transition("walk",
                            s.id(), to, "test", OptionalLong.of(at.epoch()))), from + " -> " + to);
                    assertTrue(EnumSet.of(SessionFailure.ILLEGAL_TRANSITION, SessionFailure.NOT_LIVE)
                            .contains(e.failure()));
                    assertEquals(at, reload(s.id()), "a refused move changes nothing");
                }
                if (!reload(s.id()).isTerminal()) {
                    join(service.release("walk", s.id(), "", OptionalLong.empty()));
                }
            }
        }
    }

    @Test
    void aStaleEpochIsFencedOff() {
        Session s = allocate("t1", "k1");
        join(service.transition("t1", s.id(), SessionState.READY, "prefill done", OptionalLong.of(1)));
        refused(SessionFailure.STALE_EPOCH, () -> service.transition("t1", s.id(), SessionState.ATTACHED, "late",
                OptionalLong.of(1)));
        Session now = reload(s.id());
        assertEquals(SessionState.READY, now.state());
        assertEquals(2, now.epoch());
    }

    // ---------------------------------------------------------------- expiry and cleanup

    @Test
    void expiryIsNeverEarlyAndDischargesCleanupOnce() {
        Session s = allocate("t1", "k1");
        obligate(s, "prefill@p-0", null);
        clock.advance(DEFAULT_LEASE.minusMillis(1));
        assertEquals(0, sweep().expired());
        assertEquals(SessionState.ALLOCATED, reload(s.id()).state());
        clock.advance(Duration.ofMillis(1));
        assertEquals(1, sweep().expired());
        Session expired = reload(s.id());
        assertEquals(SessionState.EXPIRED, expired.state());
        assertEquals(2, expired.epoch());
        assertEquals(1, port.callsFor(s.id()).size());
        assertTrue(expired.pendingObligations().isEmpty());
        assertEquals(CleanupObligation.Status.DISCHARGED, expired.obligations().get(0).status());
        sweep();
        clock.advance(CLAIM_TTL.multipliedBy(2));
        sweep();
        assertEquals(1, port.callsFor(s.id()).size());
    }

    @Test
    void aRenewedLeaseOutlivesItsFirstExpiry() {
        Session s = allocate("t1", "k1");
        clock.advance(Duration.ofSeconds(20));
        join(service.renew("t1", s.id(), Optional.of(Duration.ofSeconds(30)), OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(15));
        assertEquals(0, sweep().expired());
        assertEquals(SessionState.ALLOCATED, reload(s.id()).state());
        clock.advance(Duration.ofSeconds(15));
        assertEquals(1, sweep().expired());
    }

    @Test
    void aShortenedLeaseExpiresOnItsNewTime() {
        Session s = allocate("t1", "k1");
        join(service.renew("t1", s.id(), Optional.of(Duration.ofSeconds(5)), OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(5));
        assertEquals(1, sweep().expired());
    }

    @Test
    void anEngineThatCannotReleaseEarlyKeepsTheTombstoneUntilItsHoldEnds() {
        Session s = allocate("t1", "k1");
        obligate(s, "prefill@p-0", null);
        Instant holdEnds = clock.instant().plus(RETENTION).plus(Duration.ofMinutes(5));
        port.answerAlways(o -> Uni.createFrom().item(DischargeResult.engineHoldsUntil(holdEnds)));
        join(service.release("t1", s.id(), "", OptionalLong.empty()));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> reload(s.id()).pendingObligations().isEmpty());
        Session held = reload(s.id());
        assertEquals(CleanupObligation.Status.ENGINE_HELD, held.obligations().get(0).status());
        assertTrue(held.engineMayHoldKv(clock.instant()));
        clock.advance(RETENTION);
        sweep();
        assertTrue(join(store.find(s.id())).isPresent(), "kept while the engine may still hold KV");
        clock.set(holdEnds);
        assertEquals(1, sweep().purged());
    }

    @Test
    void aFailingDischargeIsRetriedThenAbandoned() {
        Session s = allocate("t1", "k1");
        obligate(s, "prefill@p-0", null);
        port.answerAlways(o -> Uni.createFrom().item(DischargeResult.retry("engine unreachable")));
        clock.advance(DEFAULT_LEASE);
        sweep();
        assertEquals(1, port.callsFor(s.id()).size());
        assertEquals(1, reload(s.id()).pendingObligations().get(0).attempts());
        sweep();
        assertEquals(1, port.callsFor(s.id()).size(), "not retried before the backoff");
        for (int i = 0; i < MAX_ATTEMPTS; i++) {
            clock.advance(RETRY_BACKOFF);
            sweep();
        }
        assertEquals(MAX_ATTEMPTS, port.callsFor(s.id()).size());
        CleanupObligation o = reload(s.id()).obligations().get(0);
        assertEquals(CleanupObligation.Status.ABANDONED, o.status());
        assertEquals("engine unreachable", o.lastError());
    }

    @Test
    void anObligationRecordedAfterTheEndIsDischargedToo() {
        Session s = allocate("t1", "k1");
        join(service.transition("t1", s.id(), SessionState.CANCELLED, "client cancelled", OptionalLong.empty()));
        obligate(s, "late-prefill@p-0", null);
        sweep();
        assertEquals(1, port.callsFor(s.id()).size());
        assertTrue(reload(s.id()).pendingObligations().isEmpty());
    }

    @Test
    void anEndThatSettlesAPulledHoldLeavesNothingToDischargeOrCount() {
        Session s = allocate("t1", "k1");
        Instant holdEnds = clock.instant().plus(Duration.ofMinutes(8));
        CleanupObligation parked = obligate(s, "prefill@p-0", holdEnds).obligations().get(0);
        join(service.transition("t1", s.id(), SessionState.READY, "the prefill parked", OptionalLong.empty()));
        join(service.transition("t1", s.id(), SessionState.ATTACHED, "the decode attaches", OptionalLong.empty()));
        Session ended = join(service.end("t1", s.id(), SessionState.COMPLETE, "the decode finished",
                OptionalLong.empty(), List.of(parked.pulled()))).session();
        assertEquals(CleanupObligation.Status.DISCHARGED, ended.obligations().get(0).status());
        assertEquals(CleanupObligation.Status.DISCHARGED, reload(s.id()).obligations().get(0).status());
        assertTrue(reload(s.id()).pendingObligations().isEmpty());
        assertEquals(0L, join(store.countEngineHeld(clock.instant())));
        sweep();
        assertEquals(0, port.callsFor(s.id()).size(), "a hold the decode pulled is not discharged again");
    }

    @Test
    void anEndWritesHoldsItRecordsWithItAsOpenAndClaimsThem() {
        Session s = allocate("t1", "k1");
        Instant holdEnds = clock.instant().plus(Duration.ofMinutes(8));
        CleanupObligation parked = CleanupObligation.pending("prefill@p-0", "sim", "p-0", "parked-prefill-kv",
                Map.of("rid", s.requestId()), holdEnds, true);
        port.answerAlways(o -> Uni.createFrom().item(DischargeResult.engineHoldsUntil(holdEnds)));
        Session ended = join(service.end("t1", s.id(), SessionState.CANCELLED, "cancelled by the client",
                OptionalLong.empty(), List.of(parked))).session();
        assertEquals(1, ended.obligations().size());
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> port.callsFor(s.id()).size() == 1);
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> reload(s.id()).pendingObligations().isEmpty());
        assertEquals(1L, join(store.countEngineHeld(clock.instant())), "counted while the engine holds it");
        clock.set(holdEnds);
        assertEquals(0L, join(store.countEngineHeld(clock.instant())), "and not once its hold ended");
    }

    @Test
    void anEndRefusedOnAStaleEpochWritesNoneOfItsObligations() {
        Session s = allocate("t1", "k1");
        CleanupObligation parked = CleanupObligation.pending("prefill@p-0", "sim", "p-0", "parked-prefill-kv",
                Map.of(), null, true);
        refused(SessionFailure.STALE_EPOCH, () -> service.end("t1", s.id(), SessionState.COMPLETE, "late",
                OptionalLong.of(s.epoch() + 7), List.of(parked)));
        assertTrue(reload(s.id()).obligations().isEmpty());
        assertEquals(SessionState.ALLOCATED, reload(s.id()).state());
    }

    /**
     * A parked prefill and an attaching decode in one write: the hold recorded, the session through READY to
     * ATTACHED, the epoch up by two, fenced like any move; a first step the state does not allow writes nothing.
     */
    @Test
    void aMoveThroughReadyToAttachedWritesTheHoldAndBothSteps() {
        Session s = allocate("t1", "k1");
        CleanupObligation parked = CleanupObligation.pending("prefill@p-0", "sim", "p-0", "parked-prefill-kv",
                Map.of(), clock.instant().plus(Duration.ofMinutes(8)), false);
        refused(SessionFailure.STALE_EPOCH, () -> service.advance("t1", s.id(), SessionState.READY,
                SessionState.ATTACHED, "parked and attached", OptionalLong.of(s.epoch() + 1), List.of(parked)));
        assertTrue(reload(s.id()).obligations().isEmpty(), "a refused move writes no hold");

        Session attached = join(service.advance("t1", s.id(), SessionState.READY, SessionState.ATTACHED,
                "parked and attached", OptionalLong.of(s.epoch()), List.of(parked))).session();
        assertEquals(SessionState.ATTACHED, attached.state());
        assertEquals(s.epoch() + 2, attached.epoch());
        assertEquals(List.of(parked.id()), reload(s.id()).pendingObligations().stream().map(CleanupObligation::id)
                .toList());
        assertEquals(1L, join(store.countByState()).get(SessionState.ATTACHED));

        refused(SessionFailure.ILLEGAL_TRANSITION, () -> service.advance("t1", s.id(), SessionState.READY,
                SessionState.ATTACHED, "again", OptionalLong.empty(), List.of()));
        assertEquals(s.epoch() + 2, reload(s.id()).epoch());
    }

    /**
     * What a move answers is the record as stored after it, field for field: a store that answers from what it read
     * and changed (not from a second read) must not drift from what a later read finds.
     */
    @Test
    void everyMoveAnswersTheRecordAsStored() {
        Session s = allocate("t1", "k1");
        CleanupObligation parked = CleanupObligation.pending("prefill@p-0", "sim", "p-0", "parked-prefill-kv",
                Map.of("rid", s.requestId()), clock.instant().plus(Duration.ofMinutes(8)), true);
        Session attached = join(service.advance("t1", s.id(), SessionState.READY, SessionState.ATTACHED,
                "parked and attached", OptionalLong.of(s.epoch()), List.of(parked))).session();
        assertEquals(reload(s.id()), attached);

        clock.advance(Duration.ofSeconds(3));
        CleanupObligation decodeHold = CleanupObligation.pending("decode@d-0", "sim", "d-0", "decode-kv",
                Map.of(), null, false);
        // the store itself, so that no discharge changes the record between the move and the read
        SessionStore.Transitioned ended = join(store.transition(new SessionStore.TransitionCommand(s.id(), "t1",
                SessionState.FAILED, OptionalLong.of(attached.epoch()), "the decode failed", clock.instant(),
                "replica-a", Duration.ofSeconds(30), List.of(parked, decodeHold))));
        assertEquals(SessionState.FAILED, ended.session().state());
        assertEquals(2, ended.claim().obligations().size(), "both holds are open, and claimed");
        assertEquals(reload(s.id()), ended.session());
    }

    @Test
    void statesAreCountedAcrossTheStore() {
        Session a = allocate("t1", "k1");
        allocate("t1", "k2");
        join(service.release("t1", a.id(), "", OptionalLong.empty()));
        Map<SessionState, Long> counts = join(store.countByState());
        assertEquals(1L, counts.get(SessionState.ALLOCATED));
        assertEquals(1L, counts.get(SessionState.RELEASED));
        assertEquals(2L, counts.values().stream().mapToLong(Long::longValue).sum());
        assertEquals(1, join(store.countLive("t1", clock.instant())));
    }

    @Test
    void theDueIndexIsReadWholeInBucketOrderAsOfTheInstantAsked() {
        List<Session> made = IntStream.range(0, MAX_LIVE)
                .mapToObj(i -> allocate("t1", "due-" + i)).toList();
        List<List<DueEntry>> now = join(store.findDue(clock.instant(), 10));
        assertEquals(SessionIds.BUCKETS, now.size(), "every bucket, an empty one too");
        assertTrue(now.stream().allMatch(List::isEmpty), "no lease has run out yet: " + now);

        Instant leasesOut = clock.instant().plus(DEFAULT_LEASE);
        List<List<DueEntry>> due = join(store.findDue(leasesOut, 10));
        assertEquals(SessionIds.BUCKETS, due.size());
        for (Session s : made) {
            List<DueEntry> bucket = due.get(SessionIds.bucketOf(s.id()));
            assertEquals(1, bucket.stream().filter(e -> e.sessionId().equals(s.id())).count(),
                    "in its own bucket, once: " + bucket);
        }
        assertEquals(made.size(), due.stream().mapToInt(List::size).sum(), "nothing else: " + due);
    }

    // ---------------------------------------------------------------- the operator's view

    private static List<String> ids(List<Session> sessions) {
        return sessions.stream().map(Session::id).toList();
    }

    @Test
    void theLeasesThatRunOutSoonestAreListedForTheTenantsAskedAbout() {
        Session thirty = allocate("t1", "k1");
        Session ten = allocate("t1", "k2");
        Session twenty = allocate("t2", "k3");
        allocate("t3", "k4");
        Session released = allocate("t1", "k5");
        join(service.renew("t1", ten.id(), Optional.of(Duration.ofSeconds(10)), OptionalLong.empty()));
        join(service.renew("t2", twenty.id(), Optional.of(Duration.ofSeconds(20)), OptionalLong.empty()));
        join(service.release("t1", released.id(), "", OptionalLong.empty()));
        List<String> tenants = List.of("t1", "t2");

        assertEquals(List.of(ten.id(), twenty.id(), thirty.id()),
                ids(join(store.soonestLeases(tenants, clock.instant(), 10))), "soonest first; t3 was not asked about");
        assertEquals(List.of(ten.id(), twenty.id()), ids(join(store.soonestLeases(tenants, clock.instant(), 2))));
        List<Session> listed = join(store.soonestLeases(tenants, clock.instant(), 1));
        assertEquals(clock.instant().plusSeconds(10), listed.get(0).leaseExpiresAt());
        assertEquals(SessionState.ALLOCATED, listed.get(0).state());

        join(service.renew("t1", ten.id(), Optional.of(Duration.ofSeconds(40)), OptionalLong.empty()));
        clock.advance(Duration.ofSeconds(25));
        assertEquals(List.of(thirty.id(), ten.id()), ids(join(store.soonestLeases(tenants, clock.instant(), 10))),
                "a lease that ran out is not listed, even before the reaper expires it; a renewed one moves");
        assertEquals(List.of(), join(store.soonestLeases(List.of(), clock.instant(), 10)));
    }

    @Test
    void theHoldsReleasedSoonestAreListedAndOneWithoutAKnownEndComesLast() {
        port.answerAlways(o -> Uni.createFrom().item(o.id().startsWith("stuck")
                ? DischargeResult.retry("engine unreachable") : DischargeResult.engineHoldsUntil(o.heldUntil())));
        Session late = endedWithHold("k1", "prefill@late", clock.instant().plus(Duration.ofMinutes(8)));
        Session stuck = endedWithHold("k2", "stuck@p-0", clock.instant().plus(Duration.ofMinutes(1)));
        Session soon = endedWithHold("k3", "prefill@soon", clock.instant().plus(Duration.ofMinutes(2)));
        obligate(allocate("t1", "k4"), "prefill@live", clock.instant().plus(Duration.ofMinutes(1)));

        assertEquals(List.of(soon.id(), late.id(), stuck.id()), ids(join(store.soonestReleases(clock.instant(), 10))),
                "ended sessions only, by when their holds end; a hold waiting for its discharge last");
        assertEquals(List.of(soon.id()), ids(join(store.soonestReleases(clock.instant(), 1))));
        assertEquals(CleanupObligation.Status.ENGINE_HELD,
                join(store.soonestReleases(clock.instant(), 1)).get(0).obligations().get(0).status());

        clock.advance(Duration.ofMinutes(3));
        assertEquals(List.of(late.id(), stuck.id()), ids(join(store.soonestReleases(clock.instant(), 10))),
                "a hold that ended is not listed; one never discharged still is");
    }

    /** A released session whose engine reported a hold: discharged at once, the engine keeping it as it answers. */
    private Session endedWithHold(String key, String obligationId, Instant heldUntil) {
        Session s = allocate("t1", key);
        obligate(s, obligationId, heldUntil);
        join(service.release("t1", s.id(), "", OptionalLong.empty()));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
            CleanupObligation o = reload(s.id()).obligations().get(0);
            return !o.isPending() || o.attempts() > 0;
        });
        return s;
    }

    // ---------------------------------------------------------------- tracing

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SPAN_ID = "00f067aa0ba902b7";
    private static final String TRACE_PARENT = "00-" + TRACE_ID + "-" + SPAN_ID + "-01";

    private SpanData onlySpan(String name) {
        List<SpanData> named = spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
        assertEquals(1, named.size(), name + " in " + spans.getFinishedSpanItems());
        return named.get(0);
    }

    @Test
    void aGenerateSessionKeepsItsRequestsTraceAndTheReaperLinksItsCleanupToIt() {
        Session s = join(service.allocateForGenerate("t1", command("gen-traced", ""), TRACE_PARENT)).session();
        assertEquals(TRACE_PARENT, s.traceParent());
        assertEquals(TRACE_PARENT, reload(s.id()).traceParent());
        obligate(s, "prefill@p-0", null);
        clock.advance(DEFAULT_LEASE);
        assertEquals(1, sweep().expired());
        assertEquals(TRACE_PARENT, reload(s.id()).traceParent(), "the trace outlives the session's transitions");

        SpanData reap = onlySpan("handoff.reap");
        SpanData cleanup = onlySpan("handoff.cleanup");
        assertFalse(reap.getParentSpanContext().isValid(), "the reaper's work is a trace of its own");
        assertEquals(reap.getSpanId(), cleanup.getParentSpanId());
        for (SpanData span : List.of(reap, cleanup)) {
            assertEquals(1, span.getLinks().size(), span.getName());
            SpanContext origin = span.getLinks().get(0).getSpanContext();
            assertEquals(TRACE_ID, origin.getTraceId(), span.getName());
            assertEquals(SPAN_ID, origin.getSpanId(), span.getName());
            assertEquals(s.id(), span.getAttributes().get(HandoffTracing.SESSION_ID));
        }
        assertEquals(List.of("session.expired"), reap.getEvents().stream().map(EventData::getName).toList());
        assertEquals(2L, reap.getEvents().get(0).getAttributes().get(HandoffTracing.SESSION_EPOCH));
        EventData settled = cleanup.getEvents().get(0);
        assertEquals("obligation.settled", settled.getName());
        assertEquals("prefill@p-0", settled.getAttributes().get(HandoffTracing.OBLIGATION_ID));
        assertEquals("DISCHARGED", settled.getAttributes().get(HandoffTracing.OBLIGATION_STATUS));
    }

    @Test
    void aSessionWithoutARequestTraceIsReapedWithoutALink() {
        Session s = allocate("t1", "k-untraced");
        assertEquals("", reload(s.id()).traceParent());
        obligate(s, "prefill@p-0", null);
        clock.advance(DEFAULT_LEASE);
        assertEquals(1, sweep().expired());
        assertTrue(onlySpan("handoff.reap").getLinks().isEmpty());
        assertTrue(onlySpan("handoff.cleanup").getLinks().isEmpty());
    }
}
