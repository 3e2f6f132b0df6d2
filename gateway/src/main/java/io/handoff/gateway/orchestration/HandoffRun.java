package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.orchestration.Admission.Legs;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.gateway.telemetry.TracedLeg;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.PrefillReady;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One accepted request: its legs in the style's order, the relay of the decode stream, and the one ending of its
 * session. Whatever ends it first (completion, a failing leg, a client cancel, Control.Abort, the session ended by
 * another replica) decides its {@link Ending} once, by compare-and-set; from that one value follow the native aborts
 * of the legs still running, the session's one end, and the client's last events.
 */
public final class HandoffRun implements RunningRequest {

    private static final Logger LOG = Logger.getLogger(HandoffRun.class);

    private final Admission admission;
    private final Route route;
    private final EngineConnector connector;
    private final SessionService sessions;
    private final LeaseKeeper keeper;
    private final Reservation reservation;
    private final GenerateMetrics metrics;
    private final RecentHandoffs recent;
    private final Duration abortTimeout;
    private final EventRelay relay;
    private final RequestTrace trace;
    private final HeldLedger ledger;
    private final DecodeAttempts decodes;
    private final Vertx vertx;
    private final AtomicReference<Ending> ending = new AtomicReference<>();
    /** Completed with a reason when the run is stopped from outside; the relayed stream then ends at once. */
    private final CompletableFuture<String> stop = new CompletableFuture<>();
    private volatile Handoff handoff;
    private volatile long epoch;
    private volatile Throwable prefillFailure;
    private volatile SessionState endedAs;
    /** The last move of the session, which the end waits for. Guarded by this, with the decision. */
    private Uni<Void> lastMove = Uni.createFrom().voidItem();
    /** The session's one end, once the ending is decided. Guarded by this. */
    private Uni<Void> end;
    /** The client's stream completes first, and {@link #release} ends the session. Guarded by this. */
    private boolean endAfterTheClient;

    HandoffRun(Admission admission, SessionService sessions, LeaseKeeper keeper, Duration abortTimeout,
            GenerateMetrics metrics, RecentHandoffs recent, Vertx vertx, Reservation reservation) {
        this.vertx = vertx;
        this.recent = recent;
        this.admission = admission;
        this.route = admission.route();
        this.connector = route.connector();
        this.sessions = sessions;
        this.keeper = keeper;
        this.abortTimeout = abortTimeout;
        this.metrics = metrics;
        this.reservation = reservation;
        this.handoff = admission.handoff();
        this.epoch = admission.session().epoch();
        // a participant's prefill leg relays no token: nothing to time
        this.relay = new EventRelay(admission.requestId(), admission.outputs(), admission.legs() == Legs.PREFILL
                ? FirstToken.UNTIMED
                : new FirstToken(metrics.firstToken(route.name(), admission.styleName()), admission.arrivedNanos()));
        this.trace = admission.trace();
        this.ledger = new HeldLedger(sessions, admission.tenant(), admission.session(), route.name(),
                admission.requestId());
        this.decodes = new DecodeAttempts(route, admission.decodeSlot());
    }

    @Override
    public String requestId() {
        return admission.requestId();
    }

    public String sessionId() {
        return admission.session().id();
    }

    @Override
    public String tenant() {
        return admission.tenant();
    }

    @Override
    public void abort(String reason) {
        stopWith(new Ending.Aborted(reason));
    }

    /** The session ended under the request (aborted or expired on another replica): stop without touching it. */
    void sessionLost(String reason) {
        stopWith(new Ending.SessionLost(reason, Optional.empty()));
    }

    private void stopWith(Ending outside) {
        if (decide(outside) == outside) {
            stop.complete(outside.reason());
        }
    }

    Multi<GenerateResponse> stream() {
        return MapOrDrop.of(EndableStream.until(legs(), stop), relay::accept)
                .onCompletion().switchTo(() -> finish(ending.get() != null ? ending.get() : natural()))
                .onFailure().recoverWithMulti(this::legFailed)
                .onCancellation().call(() -> end(decide(new Ending.CancelledByClient())))
                .onTermination().invoke(this::release);
    }

    // ---- the styles, as steps

    private Multi<GenerateResponse> legs() {
        return switch (admission.legs()) {
            case PREFILL -> prefill().onItem().transformToMulti(this::parkForParticipant);
            case DECODE -> attach("the participant's decode attaches").onItem().transformToMulti(x -> decode(1));
            case BOTH -> handoff.style() == ScheduleStyle.CONTEXT_FIRST ? contextFirst() : decodeFirst();
        };
    }

    /**
     * Context-first: the prefill parks its KV; in one write the producer's hold is recorded, the session passes
     * READY and the decode attaches (ATTACHED); the decode pulls the KV.
     */
    private Multi<GenerateResponse> contextFirst() {
        return prefill().onItem().transformToMulti(result -> result instanceof PrefillResult.Ready ready
                ? decodeWhileAttaching(ready)
                : finishedInPrefill((PrefillResult.Finished) result));
    }

    /**
     * The decode leg leaves while the write that attaches it is in flight, rather than after it: the write is a
     * store round trip on the way to the first token. It stays safe because the end waits for that write
     * ({@link #lastMove}), a write refused (the session ended elsewhere) stops the run as a lost session, natively
     * aborting the decode, and a replica that dies before the write lands leaves the hold unrecorded exactly as it
     * would have between the prefill's answer and the write (docs/api.md, "Context-first").
     */
    private Multi<GenerateResponse> decodeWhileAttaching(PrefillResult.Ready ready) {
        CompletableFuture<Void> attached = parked(ready, SessionState.ATTACHED,
                "the prefill parked its KV and the decode attaches").subscribeAsCompletionStage();
        if (attached.isDone()) { // written or refused at once (an in-process store, or the run is already ending)
            return Uni.createFrom().completionStage(attached).onItem().transformToMulti(x -> decode(1));
        }
        attached.whenComplete((x, failure) -> {
            if (failure != null && ending.get() instanceof Ending.SessionLost lost) {
                stop.complete(lost.reason());
            }
        });
        return decode(1);
    }

    /** A participant's prefill: parked, READY, and the framework gets our ref in PrefillReady for its decode leg. */
    private Multi<GenerateResponse> parkForParticipant(PrefillResult result) {
        if (result instanceof PrefillResult.Finished finished) {
            return finishedInPrefill(finished);
        }
        return parked((PrefillResult.Ready) result, SessionState.READY, "the participant's prefill parked its KV")
                .onItem().transformToMulti(x -> Multi.createFrom().item(GenerateResponse.newBuilder()
                        .setPrefillReady(PrefillReady.newBuilder().setKvSession(
                                ParticipantRef.issue(sessionId(), epoch, route, handoff)))
                        .build()));
    }

    /**
     * Generation-first and concurrent: the decode is admitted first as the rendezvous, then the prefill fills the
     * same session. A peer that is not ready yet is not a failure; a failing leg fails both.
     */
    private Multi<GenerateResponse> decodeFirst() {
        Multi<GenerateResponse> fillsTheSession = prefill().onItem().transformToMulti(result ->
                recordHeld(result.held()).onItem().transformToMulti(v -> Multi.createFrom().empty()));
        return attach("the decode is admitted as the rendezvous").onItem()
                .transformToMulti(x -> Multi.createBy().merging().streams(decode(1), fillsTheSession));
    }

    /** The request completed during its prefill: its session is released, and the answer is the prefill's. */
    private Multi<GenerateResponse> finishedInPrefill(PrefillResult.Finished finished) {
        ledger.note(finished.held());
        return end(decide(new Ending.FinishedInPrefill()))
                .onItem().transformToMulti(x -> Multi.createFrom().iterable(finished.events()));
    }

    /**
     * The producer parked its KV: the session passes READY (and goes on to {@code target}) in the one write that
     * records what the producer holds, so that no replica ever sees it READY without the hold it must discharge.
     */
    private Uni<Void> parked(PrefillResult.Ready ready, SessionState target, String why) {
        handoff = ready.handoff();
        ledger.note(ready.held());
        List<CleanupObligation> holds = ledger.unwritten();
        SessionState via = target == SessionState.READY ? null : SessionState.READY;
        return move(via, target, why, holds).invoke(() -> ledger.written(holds));
    }

    private Uni<Void> attach(String why) {
        return move(SessionState.ATTACHED, why);
    }

    // ---- the legs

    private Uni<PrefillResult> prefill() {
        Handoff planned = handoff;
        return trace.leg(TracedLeg.PREFILL, planned.prefill(), forward -> {
            Handoff sent = planned.withForward(forward);
            return LegLimits.parkWithin(connector.prefill(sent)
                    .onCancellation().invoke(() -> ledger.note(connector.heldAfterCancelledPrefill(sent))),
                    route.settings().prefillTimeout());
        }).onFailure().invoke(f -> prefillFailure = f);
    }

    /** The decode leg, moved to another endpoint when it could not reach its engine and may be sent elsewhere. */
    private Multi<GenerateResponse> decode(int attempt) {
        Handoff current = handoff;
        return trace.stream(TracedLeg.DECODE, current.decode(), attempt, forward -> LegLimits.idle(
                        connector.decode(current.withForward(forward)).onItem().invoke(this::notePull),
                        route.settings().decodeIdleTimeout(), vertx))
                .onFailure(f -> decodes.retryable(f, attempt, relay.started())).recoverWithMulti(f -> {
                    PooledEndpoint left = decodes.current();
                    Optional<PooledEndpoint> next = decodes.next(f);
                    if (next.isEmpty()) {
                        return Multi.createFrom().failure(f);
                    }
                    LOG.infof("request %s: decode endpoint %s unreachable (%s); trying %s", requestId(),
                            current.decode().name(), f.getMessage(), next.get().endpoint().name());
                    handoff = current.withDecode(next.get().endpoint());
                    reservation.decodeMoved(left, next.get());
                    return decode(attempt + 1);
                })
                .onFailure().invoke(decodes::failed);
    }

    /** A decode that produced output has pulled the parked KV. */
    private void notePull(GenerateResponse event) {
        if (event.hasToken() || event.hasFinished()) {
            ledger.pulled();
        }
    }

    // ---- the ending

    /**
     * Decides how the run ends, if nothing has yet, and answers the ending that won. The lease stops being renewed
     * here: whoever ends the session next does so at once.
     */
    private synchronized Ending decide(Ending proposed) {
        if (ending.compareAndSet(null, proposed)) {
            keeper.forget(sessionId());
        }
        return ending.get();
    }

    /** The legs' stream ended by itself: every output finished, or the participant's prefill parked. */
    private Ending natural() {
        relay.requireDone();
        if (admission.legs() == Legs.PREFILL && !relay.errored()) {
            return new Ending.ParkedForParticipant();
        }
        return new Ending.Completed(relay.errored());
    }

    /**
     * A leg failed. What its engine still holds is noted whatever ended the run (a leg the client's cancel aborted
     * fails too, and reports what it holds); the failure decides the ending only if nothing else has.
     */
    private Multi<GenerateResponse> legFailed(Throwable failure) {
        EngineException e = Ending.Failed.asEngineFailure(failure);
        ledger.note(e.held());
        Ending decided = decide(new Ending.Failed(e));
        if (decided instanceof Ending.Failed) {
            RequestLog.failed(requestId(), route.name(), trace.traceId(), e, handoff.prefill(), handoff.decode());
        }
        return finish(decided);
    }

    private Multi<GenerateResponse> finish(Ending proposed) {
        Ending decided = decide(proposed);
        if (endsAfterTheClient(decided)) {
            Uni<Void> moved;
            synchronized (this) {
                moved = lastMove;
                endAfterTheClient = true;
            }
            return moved.onItem().transformToMulti(x -> Multi.createFrom().empty());
        }
        return end(decided).onItem().transformToMulti(x -> Multi.createFrom().iterable(decided.tail(relay)));
    }

    /**
     * Whether the client's stream completes before the session's end is written (which {@link #release} then
     * starts): only when the decode finished every output of a run whose legs are both ours, so the client has
     * nothing left to receive and no framework acts on the session next. The stream still waits for the session's
     * last move, so the producer's hold is recorded before the client hears the end (docs/api.md, "When the
     * session's end is written").
     */
    private boolean endsAfterTheClient(Ending decided) {
        return decided instanceof Ending.Completed && admission.legs() == Legs.BOTH;
    }

    /**
     * The one end of the run, for the ending that was decided: the legs still running are aborted natively where
     * the ending says so, the session's last move lands, and the session ends with what the ledger holds for it.
     * Memoized: a client that goes away does not cancel it, and every path that ends the run waits for the same end.
     */
    private synchronized Uni<Void> end(Ending decided) {
        if (end == null) {
            Uni<Void> moved = lastMove;
            end = Uni.createFrom().deferred(() -> (decided.abortsLegs() ? abortLegs() : Uni.createFrom().voidItem())
                    .chain(() -> moved)
                    .chain(ledger::closing)
                    .chain(settled -> write(decided, settled)))
                    .memoize().indefinitely();
        }
        return end;
    }

    /** Writes the session's end with what the ledger settled; a session this run does not end gets what is owed. */
    private Uni<Void> write(Ending decided, List<CleanupObligation> settled) {
        Optional<SessionState> state = decided.sessionEnd();
        if (state.isEmpty()) {
            ledger.endNotWritten(settled);
            return Uni.createFrom().voidItem();
        }
        return sessions.end(tenant(), sessionId(), state.get(), decided.reason(), OptionalLong.of(epoch), settled)
                .invoke(t -> {
                    epoch = t.session().epoch();
                    endedAs = state.get();
                    metrics.ended(route.name(), admission.styleName(), state.get().name());
                    trace.session(t.session(), handoff.prefill(), handoff.decode());
                    RequestLog.ended(requestId(), route.name(), admission.legs() == Legs.BOTH
                                    ? handoff.style().configName() : "participant " + admission.legs(),
                            route.family(), handoff.prefill(), handoff.decode(), sessionId(), state.get(), epoch,
                            trace.traceId());
                    recent.add(requestId(), route.name(), admission.styleName(), handoff.prefill().name(),
                            handoff.decode().name(), sessionId(), state.get(), t.session().updatedAt(),
                            admission.arrivedNanos(), trace.traceId());
                })
                .onFailure().invoke(f -> {
                    LOG.debugf("request %s: session %s not moved to %s: %s", requestId(), sessionId(), state.get(),
                            f.getMessage());
                    ledger.endNotWritten(settled);
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * Gives back what the run took, once its stream terminated. A session whose end comes after the client's stream
     * is ended from here, under a span of its own, and the run keeps its place among this replica's runs until that
     * end lands.
     */
    private void release() {
        if (admission.prefillSlot() != null) {
            admission.prefillSlot().finished(prefillFailure);
        }
        decodes.release();
        trace.ended(outcome());
        boolean endsNow;
        Ending decided;
        synchronized (this) {
            endsNow = endAfterTheClient;
            decided = ending.get();
        }
        if (endsNow) {
            // release runs before the client hears its stream complete, in the same turn of the event loop: the end
            // starts in a later turn, so that its first steps do not hold the client's last bytes back
            Context here = vertx.getOrCreateContext();
            reservation.leaveBefore(trace.afterTheCall(() -> end(decided))
                    .runSubscriptionOn(start -> here.runOnContext(v -> start.run())));
        } else {
            reservation.leave();
        }
    }

    /**
     * How the request ended, for its span: the state its session ended in, or, when that end was not written (the
     * session ended elsewhere, the store refused, the client went away first), what the client saw.
     */
    private String outcome() {
        if (ending.get() instanceof Ending.SessionLost) {
            return "session-lost";
        }
        if (endedAs != null) {
            return endedAs.name().toLowerCase(Locale.ROOT);
        }
        if (relay.errored()) {
            return "failed";
        }
        return relay.done() ? "complete" : "cancelled";
    }

    // ---- the session's moves

    /**
     * One move of the live session. Refused once the ending is decided (a move then would race the end for the same
     * epoch); memoized and remembered otherwise, so that a cancel while it is in flight does not lose the epoch it
     * moves to, and the end waits for it.
     */
    private Uni<Void> move(SessionState target, String reason) {
        return move(null, target, reason, List.of());
    }

    private Uni<Void> move(SessionState via, SessionState target, String reason, List<CleanupObligation> holds) {
        Uni<Void> moving = Uni.createFrom().deferred(() -> moveNow(via, target, reason, holds)).memoize()
                .indefinitely();
        synchronized (this) {
            if (ending.get() != null) {
                return Uni.createFrom().failure(EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED,
                        "the request ended before its session could become " + target));
            }
            lastMove = moving.onFailure().recoverWithNull();
        }
        return moving;
    }

    private Uni<Void> moveNow(SessionState via, SessionState target, String reason, List<CleanupObligation> holds) {
        return sessions.advance(tenant(), sessionId(), via, target, reason, OptionalLong.of(epoch), holds)
                .invoke(t -> {
                    epoch = t.session().epoch();
                    if (via != null) {
                        trace.session(t.session(), via, epoch - 1, handoff.prefill(), handoff.decode());
                    }
                    trace.session(t.session(), handoff.prefill(), handoff.decode());
                })
                .onFailure().transform(f -> {
                    EngineException lost = EngineException.sentFinal(ErrorCode.ERROR_CODE_CANCELLED,
                            "the session ended before it could become " + target + ": " + f.getMessage(), f);
                    decide(new Ending.SessionLost(lost.getMessage(), Optional.of(lost)));
                    return lost;
                })
                .replaceWithVoid();
    }

    /** Notes what a leg reports as held and writes it before the run moves on. */
    private Uni<Void> recordHeld(List<HeldKv> held) {
        ledger.note(held);
        return ledger.record();
    }

    /** Both legs through their native abort paths; an engine that only aborts on close has already been closed. */
    private Uni<Void> abortLegs() {
        Handoff h = handoff;
        List<Uni<Void>> aborts = new ArrayList<>();
        if (admission.legs() != Legs.DECODE) {
            aborts.add(abortLeg(h, Leg.PREFILL));
        }
        if (admission.legs() != Legs.PREFILL) {
            aborts.add(abortLeg(h, Leg.DECODE));
        }
        return Uni.join().all(aborts).andCollectFailures()
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    private Uni<Void> abortLeg(Handoff h, Leg leg) {
        return Uni.createFrom().deferred(() -> connector.abort(h, leg))
                .ifNoItem().after(abortTimeout).fail()
                .invoke(() -> ledger.releasedByAbort(held -> connector.abortReleases(h, leg, held)))
                .onFailure().invoke(f -> LOG.debugf("request %s: abort of the %s leg: %s", requestId(), leg,
                        f.getMessage()))
                .onFailure().recoverWithNull();
    }
}
