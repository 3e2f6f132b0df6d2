package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.gateway.telemetry.TracedLeg;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One accepted request: its legs in the style's order, the relay of the decode stream, and the one ending of its
 * session. Whatever happens (completion, a failing leg, a client cancel, Control.Abort, the session ended by
 * another replica) the legs still running are aborted through their native paths and the session ends exactly once.
 */
public final class HandoffRun implements RunningRequest {

    private static final Logger LOG = Logger.getLogger(HandoffRun.class);
    /** One line per ended request, for operators who want it (off by default, on with the demo fleet). */
    public static final String REQUEST_LOG = "handoff.requests";
    private static final Logger REQUESTS = Logger.getLogger(REQUEST_LOG);

    private final Admission admission;
    private final Route route;
    private final EngineConnector connector;
    private final SessionService sessions;
    private final LeaseKeeper keeper;
    private final Runnable onFinish;
    private final io.handoff.gateway.telemetry.HandoffMetrics metrics;
    private final Duration abortTimeout;
    private final EventRelay relay;
    private final RequestTrace trace;
    private final AtomicBoolean ended = new AtomicBoolean();
    private final CompletableFuture<String> abortSignal = new CompletableFuture<>();
    private final Set<io.handoff.connector.spi.Endpoint> triedDecodes = new HashSet<>();
    private volatile Handoff handoff;
    private volatile PooledEndpoint decodeSlot;
    private volatile long epoch;
    private volatile SessionState endedAs;
    private volatile boolean sessionLost;
    private volatile boolean finishedInPrefill;
    private volatile Throwable prefillFailure;
    private volatile Throwable decodeFailure;
    private volatile boolean cancelling;
    private final HeldLedger ledger;
    private Uni<Void> lastMove = Uni.createFrom().voidItem();

    HandoffRun(Admission admission, SessionService sessions, LeaseKeeper keeper, Duration abortTimeout,
            io.handoff.gateway.telemetry.HandoffMetrics metrics, Runnable onFinish) {
        this.metrics = metrics;
        this.admission = admission;
        this.route = admission.route();
        this.connector = route.connector();
        this.sessions = sessions;
        this.keeper = keeper;
        this.abortTimeout = abortTimeout;
        this.onFinish = onFinish;
        this.handoff = admission.handoff();
        this.decodeSlot = admission.decodeSlot();
        this.epoch = admission.session().epoch();
        this.relay = new EventRelay(admission.requestId(), admission.outputs());
        this.trace = admission.trace();
        this.ledger = new HeldLedger(sessions, admission.tenant(), admission.session(), route.name(),
                admission.requestId());
        if (decodeSlot != null) {
            triedDecodes.add(decodeSlot.endpoint());
        }
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

    public String routeName() {
        return route.name();
    }

    /** How the session ended, once it has. */
    public SessionState endedAs() {
        return endedAs;
    }

    @Override
    public void abort(String reason) {
        abortSignal.complete(reason);
    }

    /** The session ended under the request (aborted or expired on another replica): stop without touching it. */
    void sessionLost(String reason) {
        sessionLost = true;
        abortSignal.complete(reason);
    }

    Multi<GenerateResponse> stream() {
        Multi<GenerateResponse> legs = switch (admission.legs()) {
            case PREFILL -> prefillOnly();
            case DECODE -> move(SessionState.ATTACHED, "the participant's decode attaches").onItem()
                    .transformToMulti(x -> decodeLeg(1));
            case BOTH -> handoff.style() == ScheduleStyle.CONTEXT_FIRST ? contextFirst() : together();
        };
        return AbortableStream.until(legs, abortSignal)
                .onItem().transformToIterable(event -> {
                    GenerateResponse relayed = relay.accept(event);
                    return relayed == null ? List.of() : List.of(relayed);
                })
                .onCompletion().switchTo(this::ending)
                .onFailure().recoverWithMulti(this::failed)
                .onCancellation().call(this::cancelled)
                .onTermination().invoke(this::finish);
    }

    // ---- the styles

    private Multi<GenerateResponse> contextFirst() {
        return prefillLeg().onItem().transformToMulti(result -> {
            if (result instanceof PrefillResult.Finished finished) {
                return finishedInPrefill(finished);
            }
            PrefillResult.Ready ready = (PrefillResult.Ready) result;
            handoff = ready.handoff();
            return recordHeld(ready.held())
                    .chain(() -> move(SessionState.READY, "the prefill parked its KV"))
                    .chain(() -> move(SessionState.ATTACHED, "the decode attaches"))
                    .onItem().transformToMulti(x -> decodeLeg(1));
        });
    }

    /** The request completed during its prefill: no decode leg follows, and the answer is the prefill's. */
    private Multi<GenerateResponse> finishedInPrefill(PrefillResult.Finished finished) {
        finishedInPrefill = true;
        ledger.note(finished.held());
        return end(SessionState.RELEASED, "the request finished during its prefill")
                .onItem().transformToMulti(x -> Multi.createFrom().iterable(finished.events()));
    }

    /**
     * A participant's prefill: the KV is parked, the session becomes READY and the framework receives our ref in
     * PrefillReady; its decode leg attaches later. A request that finished during its prefill is answered in full.
     */
    private Multi<GenerateResponse> prefillOnly() {
        return prefillLeg().onItem().transformToMulti(result -> {
            if (result instanceof PrefillResult.Finished finished) {
                return finishedInPrefill(finished);
            }
            PrefillResult.Ready ready = (PrefillResult.Ready) result;
            handoff = ready.handoff();
            return recordHeld(ready.held())
                    .chain(() -> move(SessionState.READY, "the participant's prefill parked its KV"))
                    .onItem().transformToMulti(x -> Multi.createFrom().item(GenerateResponse.newBuilder()
                            .setPrefillReady(io.handoff.openengine.v1.PrefillReady.newBuilder().setKvSession(
                                    ParticipantRef.issue(sessionId(), epoch, route, handoff)))
                            .build()));
        });
    }

    /**
     * Generation-first and concurrent: the decode is subscribed first (it is admitted as the rendezvous), then
     * the prefill fills the same session. A peer that is not ready yet is not a failure; a failing leg fails both.
     */
    private Multi<GenerateResponse> together() {
        return move(SessionState.ATTACHED, "the decode is admitted as the rendezvous").onItem().transformToMulti(x -> {
            Multi<GenerateResponse> decode = decodeLeg(1);
            Multi<GenerateResponse> prefill = prefillLeg().onItem().transformToMulti(result -> {
                List<HeldKv> held = result instanceof PrefillResult.Ready ready ? ready.held()
                        : ((PrefillResult.Finished) result).held();
                return recordHeld(held).onItem().transformToMulti(v -> Multi.createFrom().<GenerateResponse>empty());
            });
            return Multi.createBy().merging().streams(decode, prefill);
        });
    }

    // ---- the legs

    private Uni<PrefillResult> prefillLeg() {
        Handoff planned = handoff;
        return trace.leg(TracedLeg.PREFILL, planned.prefill(), forward -> prefillWithin(planned.withForward(forward)))
                .onFailure().invoke(f -> prefillFailure = f);
    }

    /** The prefill with its timeout, inside the leg's span: a leg that timed out is an error there, not a cancel. */
    private Uni<PrefillResult> prefillWithin(Handoff planned) {
        Duration timeout = route.settings().prefillTimeout();
        return connector.prefill(planned)
                .onCancellation().invoke(() -> ledger.note(connector.heldAfterCancelledPrefill(planned)))
                .ifNoItem().after(timeout).failWith(() -> new EngineException(ErrorCode.ERROR_CODE_OVERLOADED, true,
                        true, "the prefill did not park its KV within " + timeout.toMillis() + " ms"));
    }

    /** The decode with its idle timeout, inside the leg's span like {@link #prefillWithin}. */
    private Multi<GenerateResponse> decodeWithin(Handoff current) {
        Duration idle = route.settings().decodeIdleTimeout();
        return connector.decode(current)
                .onItem().invoke(event -> {
                    if (event.hasToken() || event.hasFinished()) {
                        ledger.pulled();
                    }
                })
                .ifNoItem().after(idle).failWith(() -> new EngineException(ErrorCode.ERROR_CODE_INTERNAL, true, true,
                        "the decode stream was silent for " + idle.toMillis() + " ms"));
    }

    private Multi<GenerateResponse> decodeLeg(int attempt) {
        Handoff current = handoff;
        return trace.stream(TracedLeg.DECODE, current.decode(), attempt,
                forward -> decodeWithin(current.withForward(forward)))
                .onFailure(f -> retryElsewhere(f, attempt)).recoverWithMulti(f -> {
                    var next = route.decode().acquire(triedDecodes);
                    if (next.isEmpty()) {
                        return Multi.createFrom().failure(f);
                    }
                    LOG.infof("request %s: decode endpoint %s unreachable (%s); trying %s", requestId(),
                            current.decode().name(), f.getMessage(), next.get().endpoint().name());
                    decodeSlot.release(breakerFailure(f));
                    decodeSlot = next.get();
                    triedDecodes.add(decodeSlot.endpoint());
                    handoff = current.withDecode(decodeSlot.endpoint());
                    return decodeLeg(attempt + 1);
                })
                .onFailure().invoke(f -> decodeFailure = f);
    }

    /** Only a decode that never reached its engine, on a connector whose handoff data is not bound to it. */
    private boolean retryElsewhere(Throwable f, int attempt) {
        return f instanceof EngineException e && !e.sentToEngine() && attempt < route.settings().decodeAttempts()
                && route.capabilities().decodeRetryElsewhere() && !relay.started();
    }

    // ---- the endings

    private Multi<GenerateResponse> ending() {
        String aborted = abortSignal.getNow(null);
        if (aborted != null) {
            List<GenerateResponse> tail = relay.cancelRemaining(aborted);
            return abortLegs().chain(() -> end(SessionState.CANCELLED, aborted)).onItem().transformToMulti(x -> Multi.createFrom().iterable(tail));
        }
        if (finishedInPrefill) {
            return Multi.createFrom().empty();
        }
        relay.requireDone();
        if (admission.legs() == Admission.Legs.PREFILL && !relay.errored()) {
            keeper.forget(sessionId()); // READY now waits for the framework's decode leg, under its own lease
            return Multi.createFrom().empty();
        }
        if (relay.errored()) {
            return end(SessionState.FAILED, "the engine reported an error").onItem()
                    .transformToMulti(x -> Multi.createFrom().empty());
        }
        return end(SessionState.COMPLETE, "the decode finished").onItem()
                .transformToMulti(x -> Multi.createFrom().empty());
    }

    private Multi<GenerateResponse> failed(Throwable failure) {
        EngineException e = asEngineFailure(failure);
        ledger.note(e.held());
        if (cancelling) {
            // the client went away and cancelled() ends the session: a leg that fails meanwhile (its own native
            // abort fails it) only reports what its engine still holds, which the ledger keeps
            return Multi.createFrom().empty();
        }
        FailureLog.failed(requestId(), route.name(), e, handoff.prefill(), handoff.decode());
        List<GenerateResponse> tail = relay.done() ? List.of()
                : List.of(relay.terminalError(e.code(), e.getMessage(), relay.retryable(e)));
        return abortLegs()
                .chain(() -> end(SessionState.FAILED, e.getMessage()))
                .onItem().transformToMulti(x -> Multi.createFrom().iterable(tail));
    }

    /**
     * The client cancelled the call. Aborting a leg natively may fail it, and that failure still reaches
     * {@link #failed} (the legs are cancelled only once this completes): it must not end the session as FAILED; what
     * its engine still holds goes to the ledger, which records it whenever it arrives.
     */
    private Uni<Void> cancelled() {
        cancelling = true;
        return abortLegs().chain(() -> end(SessionState.CANCELLED, "cancelled by the client"));
    }

    private void finish() {
        trace.ended(outcome());
        keeper.forget(sessionId());
        if (admission.prefillSlot() != null) {
            admission.prefillSlot().release(breakerFailure(prefillFailure));
        }
        if (decodeSlot != null) {
            decodeSlot.release(breakerFailure(decodeFailure));
        }
        onFinish.run();
    }

    /**
     * How the request ended, for its span: the state its session ended in, or, when that end was not written (the
     * session ended elsewhere, the store refused, the client went away first), what the client saw.
     */
    private String outcome() {
        if (sessionLost) {
            return "session-lost";
        }
        if (endedAs != null) {
            return endedAs.name().toLowerCase(java.util.Locale.ROOT);
        }
        if (relay.errored()) {
            return "failed";
        }
        return relay.done() ? "complete" : "cancelled";
    }

    /**
     * A leg's failure counts against its endpoint's breaker unless the engine judged the request itself (a bad
     * argument, a feature it lacks) or the request was cancelled: those say nothing about the endpoint's health.
     */
    private static String breakerFailure(Throwable failure) {
        if (failure == null) {
            return null;
        }
        if (failure instanceof EngineException e && e.sentToEngine()
                && (e.code() == ErrorCode.ERROR_CODE_INVALID_ARGUMENT
                        || e.code() == ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE
                        || e.code() == ErrorCode.ERROR_CODE_CANCELLED)) {
            return null;
        }
        return String.valueOf(failure.getMessage());
    }

    private static EngineException asEngineFailure(Throwable f) {
        if (f instanceof EngineException e) {
            return e;
        }
        if (f instanceof TimeoutException) {
            return new EngineException(ErrorCode.ERROR_CODE_INTERNAL, true, true, f.getMessage(), f);
        }
        return new EngineException(ErrorCode.ERROR_CODE_INTERNAL, false, true,
                "internal failure: " + f.getClass().getSimpleName() + ": " + f.getMessage(), f);
    }

    // ---- the session

    /**
     * One move of the live session. Memoized and remembered: a cancel while it is in flight does not lose the epoch
     * it moves to, and the end waits for it, so that the end is fenced on the epoch the store really has.
     */
    private Uni<Void> move(SessionState target, String reason) {
        Uni<Void> moving = Uni.createFrom().deferred(() -> moveNow(target, reason)).memoize().indefinitely();
        synchronized (this) {
            if (ended.get()) {
                // the run is ending (a cancel came first): a move now would race the end for the same epoch
                return Uni.createFrom().failure(new EngineException(ErrorCode.ERROR_CODE_CANCELLED, false, true,
                        "the request ended before its session could become " + target));
            }
            lastMove = moving.onFailure().recoverWithNull();
        }
        return moving;
    }

    private Uni<Void> moveNow(SessionState target, String reason) {
        return sessions.transition(tenant(), sessionId(), target, reason, OptionalLong.of(epoch))
                .invoke(t -> {
                    epoch = t.session().epoch();
                    trace.session(t.session(), handoff.prefill(), handoff.decode());
                })
                .onFailure().transform(f -> {
                    sessionLost = true;
                    return new EngineException(ErrorCode.ERROR_CODE_CANCELLED, false, true,
                            "the session ended before it could become " + target + ": " + f.getMessage(), f);
                })
                .replaceWithVoid();
    }

    /**
     * Ends the session once, writing with the end what the ledger holds for it. A session that ended elsewhere is
     * not touched, but what the ledger never wrote is still recorded on it.
     */
    private Uni<Void> end(SessionState state, String reason) {
        Uni<Void> moved;
        synchronized (this) {
            if (!ended.compareAndSet(false, true)) {
                return Uni.createFrom().voidItem();
            }
            moved = lastMove;
        }
        keeper.forget(sessionId());
        return moved.chain(() -> ledger.closing()).chain(settled -> sessionLost ? lost(settled) : end(state, reason, settled));
    }

    private Uni<Void> lost(List<CleanupObligation> settled) {
        ledger.endNotWritten(settled);
        return Uni.createFrom().voidItem();
    }

    private Uni<Void> end(SessionState state, String reason, List<CleanupObligation> settled) {
        return sessions.end(tenant(), sessionId(), state, reason, OptionalLong.of(epoch), settled)
                .invoke(t -> {
                    epoch = t.session().epoch();
                    endedAs = state;
                    metrics.ended(route.name(), state.name());
                    trace.session(t.session(), handoff.prefill(), handoff.decode());
                    REQUESTS.infof("request %s on route %s (%s, %s): prefill %s, decode %s; session %s %s at epoch %d",
                            requestId(), route.name(), admission.legs() == Admission.Legs.BOTH
                                    ? handoff.style().configName() : "participant " + admission.legs(),
                            route.family(), handoff.prefill().name(), handoff.decode().name(), sessionId(), state,
                            epoch);
                })
                .onFailure().invoke(f -> {
                    LOG.debugf("request %s: session %s not moved to %s: %s", requestId(), sessionId(), state,
                            f.getMessage());
                    ledger.endNotWritten(settled);
                })
                .onFailure().recoverWithNull()
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
        if (admission.legs() != Admission.Legs.DECODE) {
            aborts.add(abortLeg(h, Leg.PREFILL));
        }
        if (admission.legs() != Admission.Legs.PREFILL) {
            aborts.add(abortLeg(h, Leg.DECODE));
        }
        return Uni.join().all(aborts).andCollectFailures()
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    private Uni<Void> abortLeg(Handoff h, Leg leg) {
        return Uni.createFrom().deferred(() -> connector.abort(h, leg))
                .ifNoItem().after(abortTimeout).fail()
                .onFailure().invoke(f -> LOG.debugf("request %s: abort of the %s leg: %s", requestId(), leg,
                        f.getMessage()))
                .onFailure().recoverWithNull();
    }
}
