package io.handoff.gateway.orchestration;

import com.google.protobuf.Struct;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.orchestration.Admission.Legs;
import io.handoff.gateway.orchestration.LiveRequests.RequestHandle;
import io.handoff.gateway.routing.BypassPolicy.Trigger;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TenantRateLimits;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.gateway.session.store.SessionStore.Allocation;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Every Generate, orchestrated or a participant's leg, goes through one admission routine ({@link #admit}): find the
 * route, run the entry point's checks ({@link AdmissionChecks}), take a place in the route's bulkhead, take the
 * endpoints, plan the native handoff, claim the request id, get the session (allocated, or the participant's own),
 * then start the run. Any step can refuse; a refusal gives back what the earlier steps took, is recorded once
 * (metrics, trace, log) and leaves nothing behind: no session, no engine contacted.
 *
 * <p>Drain: a draining deployment (or a replica stopping on SIGTERM) takes no new work, so an orchestrated Generate
 * (and a participant's decode that bypasses, which is new work too) is refused DRAINING. A participant's leg on a session it allocated before the
 * drain is running work: refusing it would strand the session, so it goes on, as renewals and releases do.
 */
@ApplicationScoped
public class GenerateOrchestrator {

    private static final Logger LOG = Logger.getLogger(GenerateOrchestrator.class);

    private final RouteRegistry routes;
    private final SessionService sessions;
    private final LeaseKeeper keeper;
    private final LiveRequests live;
    private final GenerateMetrics metrics;
    private final RecentHandoffs recent;
    private final HandoffTracing tracing;
    private final OrchestrationConfig config;
    private final DrainState drain;
    private final Vertx vertx;
    private final TenantRateLimits limits;
    private final AdmissionQueues queues;

    public GenerateOrchestrator(RouteRegistry routes, SessionService sessions, LeaseKeeper keeper, LiveRequests live,
            GenerateMetrics metrics, RecentHandoffs recent, HandoffTracing tracing, OrchestrationConfig config,
            DrainState drain, Vertx vertx, TenantRateLimits limits, AdmissionQueues queues) {
        this.limits = limits;
        this.queues = queues;
        this.recent = recent;
        this.vertx = vertx;
        this.routes = routes;
        this.sessions = sessions;
        this.keeper = keeper;
        this.live = live;
        this.metrics = metrics;
        this.tracing = tracing;
        this.config = config;
        this.drain = drain;
    }

    /**
     * Runs one Generate for a tenant. A refusal before acceptance fails the stream with {@link GenerateRefusal};
     * after acceptance the stream never fails: a failure is its one terminal EngineError.
     */
    public Multi<GenerateResponse> generate(String tenant, GenerateRequest request) {
        return admit(tenant, request, route -> {
            refuseWhileDraining();
            AdmissionChecks.validate(route, request, maxIdBytes(), false);
            ScheduleStyle style = AdmissionChecks.style(route, request);
            Optional<Trigger> bypass = AdmissionChecks.bypass(route, request);
            return bypass.<Entry>map(trigger -> new Entry.Bypass(style, trigger, style.configName()))
                    .orElseGet(() -> new Entry.Orchestrated(style, AdmissionChecks.mayBypassUncached(route,
                            request)));
        });
    }

    /**
     * A participant's prefill leg on the session it allocated through OpenEngineKv: the session must be this
     * tenant's, ALLOCATED, context-first, for a model of this route. Ends with PrefillReady carrying our ref.
     */
    public Multi<GenerateResponse> participantPrefill(String tenant, String sessionId, GenerateRequest request) {
        return admit(tenant, request, route -> {
            AdmissionChecks.validate(route, request, maxIdBytes(), false);
            if (!route.allows(ScheduleStyle.CONTEXT_FIRST)) {
                throw GenerateRefusal.unsupported("route " + route.name() + " does not run context-first, the only "
                        + "style whose prefill leg a framework can send on its own");
            }
            return new Entry.ParticipantPrefill(sessionId);
        });
    }

    /**
     * A participant's decode leg. With kv.session (the ref of our PrefillReady) it attaches to that READY session
     * at the epoch the ref was issued at. Without one it runs only as a bypass: under an explicit BYPASS
     * disposition, on a route whose decode endpoints can prefill locally.
     */
    public Multi<GenerateResponse> participantDecode(String tenant, GenerateRequest request) {
        return admit(tenant, request, route -> {
            AdmissionChecks.validate(route, request, maxIdBytes(), true);
            if (!request.getKv().hasSession()) {
                if (!route.capabilities().localPrefill()) {
                    throw GenerateRefusal.unsupported("a decode leg without kv.session needs decode endpoints that "
                            + "prefill locally; route " + route.name() + " has none");
                }
                if (request.getKv().getTransferDisposition() != KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS) {
                    throw GenerateRefusal.invalid("a decode leg without kv.session must say transfer disposition "
                            + "BYPASS");
                }
                refuseWhileDraining();
                return new Entry.Bypass(route.settings().defaultStyle(), Trigger.EXPLICIT, "participant-decode");
            }
            ParticipantRef.Presented ref = ParticipantRef.read(request.getKv().getSession());
            if (!ref.route().equals(route.name())) {
                throw GenerateRefusal.invalid("kv.session was issued by route " + ref.route() + ", not by route "
                        + route.name() + " which serves model " + request.getModel());
            }
            return new Entry.ParticipantDecode(ref);
        });
    }

    // ---- the one admission routine

    /** What an entry point asks admission for, once its checks passed. */
    private sealed interface Entry {

        /** How the request shows in its trace's routing step. */
        String traced();

        /**
         * Whether the entry is new work the tenant's rate limits charge: an orchestrated or bypassed Generate. A
         * participant's leg on a session it allocated is not (its AllocateKvSession was), as a drain lets it run.
         */
        default boolean charged() {
            return false;
        }

        /**
         * Both legs under a session Handoff allocates, unless {@code mayBypassUncached} and the decode endpoint
         * chosen holds enough of the prompt (the uncached-prompt trigger, decided once that endpoint is taken).
         */
        record Orchestrated(ScheduleStyle style, boolean mayBypassUncached) implements Entry {
            public String traced() {
                return style.configName();
            }

            public boolean charged() {
                return true;
            }
        }

        /** One decode endpoint prefills locally; no session. */
        record Bypass(ScheduleStyle style, Trigger trigger, String traced) implements Entry {
            public boolean charged() {
                return true;
            }
        }

        /** The prefill leg of a session the participant allocated. */
        record ParticipantPrefill(String sessionId) implements Entry {
            public String traced() {
                return "participant-prefill";
            }
        }

        /** The decode leg of a session our PrefillReady ref names. */
        record ParticipantDecode(ParticipantRef.Presented ref) implements Entry {
            public String traced() {
                return "participant-decode";
            }
        }
    }

    /** Everything an entry's admission has in hand, from the route on. */
    private record Admitting(String tenant, GenerateRequest request, GenerateRequest forEngines, Route route,
            Reservation reservation, RequestTrace trace, long arrivedNanos) {
    }

    private Multi<GenerateResponse> admit(String tenant, GenerateRequest request, Function<Route, Entry> checks) {
        // taken now, on the thread the call arrived on, where the server span is current
        RequestTrace trace = tracing.currentRequest(request.getRequestId());
        long arrivedNanos = System.nanoTime();
        return Multi.createFrom().deferred(() -> {
            Route route = null;
            try {
                route = route(request);
                Entry entry = checks.apply(route);
                trace.routed(route.name(), route.family(), entry.traced());
                if (!entry.charged() || !limits.limits(tenant)) {
                    return accept(tenant, request, route, entry, trace, arrivedNanos);
                }
                Route checked = route;
                return limits.charge(tenant, AdmissionChecks.chargedTokens(request))
                        .onFailure(SessionException.class).transform(f -> refusal((SessionException) f))
                        .onFailure(GenerateRefusal.class).invoke(f -> refused(checked, (GenerateRefusal) f, trace))
                        .onItem().transformToMulti(charge -> new UsageSettlement(limits, charge).around(
                                Multi.createFrom().deferred(() -> accept(tenant, request, checked, entry, trace,
                                        arrivedNanos))));
            } catch (GenerateRefusal refusal) {
                refused(route, refusal, trace);
                throw refusal;
            }
        });
    }

    /**
     * The steps after the checks and the rate limits: the route's bulkhead, the endpoints, the id, the session. A
     * refusal gives back what the earlier steps took. On a route with an admission queue, a request that finds no
     * slot (or finds others waiting for one) waits for its turn instead of being refused ({@link AdmissionQueue}).
     */
    private Multi<GenerateResponse> accept(String tenant, GenerateRequest request, Route route, Entry entry,
            RequestTrace trace, long arrivedNanos) {
        Optional<AdmissionQueue> queue = queues.of(route);
        Supplier<Admitted> attempt = () -> take(tenant, request, route, entry, trace, arrivedNanos, queue);
        try {
            if (queue.isEmpty() || !queue.get().anyWaiting()) {
                try {
                    return attempt.get().run();
                } catch (GenerateRefusal refusal) {
                    if (queue.isEmpty() || !refusal.awaitsSlot()) {
                        throw refusal;
                    }
                    return queued(queue.get(), attempt, refusal, route, trace);
                }
            }
            // no overtaking: a newcomer queues behind those waiting, even if a slot has just freed
            return queued(queue.get(), attempt, null, route, trace);
        } catch (GenerateRefusal refusal) {
            refused(route, refusal, trace);
            // a failed stream, not a throw: admit's own catch would record the refusal a second time
            return Multi.createFrom().failure(refusal);
        }
    }

    /** Waits in the route's queue; a refusal there (full, timed out, refused at its turn) is recorded once. */
    private Multi<GenerateResponse> queued(AdmissionQueue queue, Supplier<Admitted> attempt, GenerateRefusal why,
            Route route, RequestTrace trace) {
        return queue.await(attempt, why)
                .onFailure(GenerateRefusal.class).invoke(f -> refused(route, (GenerateRefusal) f, trace))
                .onItem().transformToMulti(Admitted::run);
    }

    /**
     * One try at the steps that take something. A refusal gives back what this try took and is thrown unrecorded:
     * the caller decides whether it is final or waited out. A request that waited is new work only if it still is:
     * a drain that began meanwhile refuses it.
     */
    private Admitted take(String tenant, GenerateRequest request, Route route, Entry entry, RequestTrace trace,
            long arrivedNanos, Optional<AdmissionQueue> queue) {
        if (entry.charged()) {
            refuseWhileDraining();
        }
        Reservation reservation = null;
        try {
            reservation = new Reservation(route, live);
            Admitting a = new Admitting(tenant, request, AdmissionChecks.forEngines(route, request), route,
                    reservation, trace, arrivedNanos);
            Multi<GenerateResponse> run = start(entry, a);
            Reservation taken = reservation;
            queue.ifPresent(q -> taken.whenFreed(q::drain));
            // a client that goes away before acceptance (while its session is allocated or looked up) takes
            // nothing with it: the orchestrated entry also ends the session the store allocates anyway
            return new Admitted(taken, run.onFailure(f -> !taken.isAccepted())
                    .invoke(f -> refusedLater(route, taken, trace, f))
                    .onCancellation().invoke(taken::cancel));
        } catch (RuntimeException e) {
            if (reservation != null) {
                reservation.cancel();
            }
            throw e;
        }
    }

    private Multi<GenerateResponse> start(Entry entry, Admitting a) {
        if (entry instanceof Entry.Orchestrated o) {
            return orchestrated(a, o.style(), o.mayBypassUncached());
        }
        if (entry instanceof Entry.Bypass b) {
            return bypassed(a, b.style(), b.trigger(), a.reservation().takeDecode(a.request()));
        }
        if (entry instanceof Entry.ParticipantPrefill p) {
            return participantPrefill(a, p.sessionId());
        }
        return participantDecode(a, ((Entry.ParticipantDecode) entry).ref());
    }

    /** A step after the first subscription (the store's answer) refused: what admission took goes back. */
    private void refusedLater(Route route, Reservation reservation, RequestTrace trace, Throwable failure) {
        reservation.cancel();
        if (failure instanceof GenerateRefusal refusal) {
            refused(route, refusal, trace);
        }
    }

    /** Every refusal, recorded in one place: the metric, the request's trace, the log. */
    private void refused(Route route, GenerateRefusal refusal, RequestTrace trace) {
        String routeName = route == null ? "none" : route.name();
        metrics.refused(routeName, refusal.code().name(), refusal.reason().label());
        trace.refused(refusal.code().name(), refusal.reason().label());
        LOG.debugf("Generate refused on route %s: %s (%s) %s", routeName, refusal.code(), refusal.reason().label(),
                refusal.getMessage());
    }

    private Route route(GenerateRequest request) {
        if (request.getModel().isEmpty()) {
            throw GenerateRefusal.invalid("model is required");
        }
        return routes.forModel(request.getModel()).orElseThrow(() -> new GenerateRefusal(
                ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, RefusalReason.UNKNOWN_MODEL, false,
                "no route serves model '" + request.getModel() + "'"));
    }

    private void refuseWhileDraining() {
        if (drain.refusesNewWork()) {
            throw GenerateRefusal.draining(drain, drain.refusal("new Generate"));
        }
    }

    private int maxIdBytes() {
        return sessions.policy().maxIdBytes();
    }

    // ---- the entries' own steps

    private Multi<GenerateResponse> orchestrated(Admitting a, ScheduleStyle style, boolean mayBypassUncached) {
        // decode first when the uncached-prompt trigger may fire: whether the prefill leg is needed at all depends on
        // what the chosen decode endpoint holds
        PooledEndpoint chosenFirst = mayBypassUncached ? a.reservation().takeDecode(a.request()) : null;
        if (chosenFirst != null && AdmissionChecks.fewUncached(a.route(), a.reservation().uncachedTokens())) {
            return bypassed(a, style, Trigger.UNCACHED_PROMPT, chosenFirst);
        }
        PooledEndpoint prefill = a.reservation().takePrefill(a.request());
        PooledEndpoint decode = chosenFirst != null ? chosenFirst : a.reservation().takeDecode(a.request());
        Handoff handoff = plan(a.route(), a.forEngines(), style, prefill, decode);
        RequestHandle handle = a.reservation().claim(a.tenant(), a.request().getRequestId());
        AllocateCommand command = new AllocateCommand(a.request().getRequestId(), a.route().settings().model(),
                a.request().getRequestId(), Optional.of(style), Optional.of(TransferDisposition.REQUIRED),
                Optional.of(a.route().leaseDefault()), Struct.getDefaultInstance(), a.route().name());
        // memoized: a client that goes away during the allocation cancels its wait, not the allocation, whose
        // session abandoned() then ends
        Uni<Allocation> allocating = handle.afterPreviousEnd(() -> sessions.allocateForGenerate(a.tenant(), command,
                a.trace().traceParent())).memoize().indefinitely();
        return allocating
                .onFailure(SessionException.class).transform(f -> refusal((SessionException) f))
                .onItem().transformToMulti(allocation -> {
                    if (!allocation.created()) {
                        throw new GenerateRefusal(ErrorCode.ERROR_CODE_DUPLICATE_REQUEST,
                                RefusalReason.DUPLICATE_REQUEST, false, "request "
                                + a.request().getRequestId() + " is already running (session "
                                + allocation.session().id() + ")");
                    }
                    a.trace().session(allocation.session(), handoff.prefill(), handoff.decode());
                    return run(a, handle, Legs.BOTH, handoff, allocation.session(), prefill, decode);
                })
                .onCancellation().invoke(() -> abandoned(a, allocating));
    }

    /** The request runs on {@code decode}, which the reservation took, alone. */
    private Multi<GenerateResponse> bypassed(Admitting a, ScheduleStyle style, Trigger trigger,
            PooledEndpoint decode) {
        plan(a.route(), a.forEngines(), style, decode, decode);
        RequestHandle handle = a.reservation().claim(a.tenant(), a.request().getRequestId());
        BypassRun run = new BypassRun(a.tenant(), a.forEngines(), a.route(), decode,
                AdmissionChecks.outputs(a.request()), a.trace(),
                new FirstToken(metrics.firstToken(a.route().name(), "bypass"), a.arrivedNanos()), vertx,
                a.reservation()::leave);
        handle.attach(run);
        a.reservation().accepted();
        String triggerName = trigger.configName();
        metrics.bypassed(a.route().name(), triggerName);
        a.trace().bypassed(triggerName);
        return run.stream();
    }

    private Multi<GenerateResponse> participantPrefill(Admitting a, String sessionId) {
        PooledEndpoint prefill = a.reservation().takePrefill(a.request());
        // the framework sends the decode leg itself: the plan names a decode endpoint only for its native fields
        EndpointPool decodePool = a.route().decode();
        PooledEndpoint anyDecode = decodePool.members().stream().findFirst().orElseThrow(() ->
                GenerateRefusal.noEndpoint(a.route().name(), "decode", decodePool.shortage()));
        Handoff handoff = plan(a.route(), a.forEngines(), ScheduleStyle.CONTEXT_FIRST, prefill, anyDecode);
        RequestHandle handle = a.reservation().claim(a.tenant(), a.request().getRequestId());
        return participantSession(a, sessionId, SessionState.ALLOCATED).onItem().transformToMulti(session -> {
            if (session.style() != ScheduleStyle.CONTEXT_FIRST) {
                throw GenerateRefusal.unsupported("session " + sessionId + " is " + session.style().configName()
                        + "; a framework sends its own prefill leg only for context-first sessions");
            }
            a.trace().session(session, handoff.prefill(), handoff.decode());
            return run(a, handle, Legs.PREFILL, handoff, session, prefill, null);
        });
    }

    private Multi<GenerateResponse> participantDecode(Admitting a, ParticipantRef.Presented ref) {
        PooledEndpoint decode = a.reservation().takeDecode(a.request());
        Handoff handoff = ref.handoff(a.request().getRequestId(), a.forEngines(), a.route(), decode);
        RequestHandle handle = a.reservation().claim(a.tenant(), a.request().getRequestId());
        return participantSession(a, ref.sessionId(), SessionState.READY).onItem().transformToMulti(session -> {
            if (session.epoch() != ref.epoch()) {
                throw new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND,
                        RefusalReason.SESSION_NOT_FOUND, false, "kv.session was issued "
                        + "at epoch " + ref.epoch() + " but session " + session.id() + " is at epoch "
                        + session.epoch());
            }
            a.trace().session(session, handoff.prefill(), handoff.decode());
            return run(a, handle, Legs.DECODE, handoff, session, null, decode);
        });
    }

    /** The participant's own session, as the leg needs it: this tenant's, in {@code expected}, of this route. */
    private Uni<Session> participantSession(Admitting a, String sessionId, SessionState expected) {
        return sessions.get(a.tenant(), sessionId)
                .onFailure(SessionException.class).transform(f -> sessionRefusal((SessionException) f))
                .invoke(session -> requireSession(session, a.route(), expected));
    }

    /** The session is in hand: the request is accepted and its run starts. */
    private Multi<GenerateResponse> run(Admitting a, RequestHandle handle, Legs legs, Handoff handoff,
            Session session, PooledEndpoint prefill, PooledEndpoint decode) {
        Admission admission = new Admission(a.request().getRequestId(), a.tenant(), a.route(), legs, handoff,
                session, prefill, decode, AdmissionChecks.outputs(a.request()), a.trace(), a.arrivedNanos());
        HandoffRun run = new HandoffRun(admission, sessions, keeper, config.abortTimeout(), metrics, recent, vertx,
                a.reservation());
        keeper.keep(a.tenant(), session.id(), session.lease(), run::sessionLost);
        handle.attach(run);
        a.reservation().accepted();
        metrics.accepted(a.route().name(), admission.styleName());
        return run.stream();
    }

    private void requireSession(Session session, Route route, SessionState expected) {
        if (session.state() != expected) {
            throw new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND,
                    RefusalReason.SESSION_NOT_FOUND, false, "session " + session.id()
                    + " is " + session.state() + "; this leg needs it " + expected);
        }
        if (routes.forModel(session.model()).filter(r -> r == route).isEmpty()) {
            throw GenerateRefusal.invalid("session " + session.id() + " was allocated for model " + session.model()
                    + ", which route " + route.name() + " does not serve");
        }
        if (session.disposition() == TransferDisposition.BYPASS) {
            throw GenerateRefusal.invalid("session " + session.id() + " was allocated with transfer disposition "
                    + "BYPASS: no KV is transferred for it");
        }
    }

    /**
     * The client went away before its request was accepted, while the session was being allocated: what admission
     * took is given back, and the session the store allocates anyway is ended, so that nothing holds the request id
     * (a retry would otherwise be refused as a duplicate until the session's lease ran out). Once accepted, this does
     * nothing: the run ends the session and gives everything back.
     */
    private void abandoned(Admitting a, Uni<Allocation> allocation) {
        Reservation reservation = a.reservation();
        if (reservation.isAccepted()) {
            return;
        }
        reservation.cancel();
        allocation.subscribe().with(created -> {
            if (created.created() && !reservation.isAccepted()) {
                sessions.transition(a.tenant(), created.session().id(), SessionState.CANCELLED,
                        "the client went away before the request was accepted",
                        OptionalLong.of(created.session().epoch()))
                        .subscribe().with(t -> { }, f -> LOG.warnf("request %s: session %s not ended: %s",
                                created.session().requestId(), created.session().id(), f.getMessage()));
            }
        }, f -> { });
    }

    private static Handoff plan(Route route, GenerateRequest request, ScheduleStyle style, PooledEndpoint prefill,
            PooledEndpoint decode) {
        try {
            return route.connector().plan(request.getRequestId(), style, request, prefill.endpoint(),
                    decode.endpoint());
        } catch (EngineException e) {
            throw new GenerateRefusal(e.code(), planReason(e.code()), e.retryable(), e.getMessage());
        }
    }

    /**
     * Why a connector refused to plan: a field it cannot carry losslessly is unsupported, a value it cannot read is
     * invalid, as the same refusals in the checks are; anything else is the plan's own.
     */
    private static RefusalReason planReason(ErrorCode code) {
        return switch (code) {
            case ERROR_CODE_UNSUPPORTED_FEATURE -> RefusalReason.UNSUPPORTED;
            case ERROR_CODE_INVALID_ARGUMENT -> RefusalReason.INVALID_REQUEST;
            default -> RefusalReason.PLAN_REFUSED;
        };
    }

    private GenerateRefusal sessionRefusal(SessionException f) {
        return switch (f.failure()) {
            case NOT_FOUND, NOT_LIVE -> new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND,
                    RefusalReason.SESSION_NOT_FOUND, false, f.getMessage());
            default -> refusal(f);
        };
    }

    private GenerateRefusal refusal(SessionException f) {
        return switch (f.failure()) {
            case QUOTA_EXCEEDED -> GenerateRefusal.overloaded(RefusalReason.TENANT_QUOTA, f.getMessage());
            case STORE_UNAVAILABLE -> GenerateRefusal.overloaded(RefusalReason.STORE_UNAVAILABLE, f.getMessage());
            case RATE_LIMITED -> GenerateRefusal.rateLimited(f.getMessage(), f.retryAfter().orElseThrow());
            case DRAINING -> GenerateRefusal.draining(drain, f.getMessage());
            case UNSUPPORTED -> GenerateRefusal.unsupported(f.getMessage());
            default -> GenerateRefusal.invalid(f.getMessage());
        };
    }
}
