package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.InputKind;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.BypassPolicy.Trigger;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.telemetry.HandoffMetrics;
import io.handoff.gateway.telemetry.HandoffTracing;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvTransferDisposition;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Orchestrated Generate, as named steps: validate, route, choose the style, decide bypass, take endpoints, plan the
 * native handoff, claim the request id, allocate the session; then run. Every step before the run can refuse, and
 * a refusal releases what the earlier steps took, so a refused request leaves nothing behind.
 */
@ApplicationScoped
public class GenerateOrchestrator {

    private static final Logger LOG = Logger.getLogger(GenerateOrchestrator.class);

    private final RouteRegistry routes;
    private final SessionService sessions;
    private final LeaseKeeper keeper;
    private final LiveRequests live;
    private final HandoffMetrics metrics;
    private final HandoffTracing tracing;
    private final OrchestrationConfig config;
    private final DrainState drain;

    public GenerateOrchestrator(RouteRegistry routes, SessionService sessions, LeaseKeeper keeper, LiveRequests live,
            HandoffMetrics metrics, HandoffTracing tracing, OrchestrationConfig config, DrainState drain) {
        this.drain = drain;
        this.routes = routes;
        this.sessions = sessions;
        this.keeper = keeper;
        this.live = live;
        this.metrics = metrics;
        this.tracing = tracing;
        this.config = config;
    }

    /**
     * Runs one Generate for a tenant. A refusal before acceptance fails the stream with {@link GenerateRefusal};
     * after acceptance the stream never fails: a failure is its one terminal EngineError.
     */
    public Multi<GenerateResponse> generate(String tenant, GenerateRequest request) {
        // taken now, on the thread the call arrived on, where the gRPC server span is current
        RequestTrace trace = tracing.currentRequest(request.getRequestId());
        return Multi.createFrom().deferred(() -> {
            Route route;
            try {
                route = route(request);
            } catch (GenerateRefusal refusal) {
                trace.refused(refusal.code().name());
                throw refusal;
            }
            try {
                if (drain.draining()) {
                    throw new GenerateRefusal(ErrorCode.ERROR_CODE_DRAINING, true, "this deployment is draining: it "
                            + "takes no new Generate; send it to another deployment, or retry once the drain is over");
                }
                validate(route, request, false);
                ScheduleStyle style = style(route, request);
                trace.routed(route.name(), route.family(), style.configName());
                Optional<Trigger> bypass = bypass(route, request);
                GenerateRequest forEngines = forEngines(route, request);
                return bypass.isPresent()
                        ? bypassed(tenant, route, style, forEngines, bypass.get(), trace)
                        : orchestrated(tenant, route, style, forEngines, trace);
            } catch (GenerateRefusal refusal) {
                refused(route, refusal, trace);
                throw refusal;
            }
        });
    }

    private void refused(Route route, GenerateRefusal refusal, RequestTrace trace) {
        metrics.refused(route.name(), refusal.code().name());
        trace.refused(refusal.code().name());
    }

    // ---- steps before acceptance

    private Route route(GenerateRequest request) {
        if (request.getModel().isEmpty()) {
            throw GenerateRefusal.invalid("model is required");
        }
        return routes.forModel(request.getModel()).orElseThrow(() -> new GenerateRefusal(
                ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, false, "no route serves model '" + request.getModel() + "'"));
    }

    private void validate(Route route, GenerateRequest request, boolean sessionAllowed) {
        String id = request.getRequestId();
        if (id.isEmpty()) {
            throw GenerateRefusal.invalid("request_id is required");
        }
        int maxId = sessions.policy().maxIdBytes();
        if (id.getBytes(StandardCharsets.UTF_8).length > maxId) {
            throw GenerateRefusal.invalid("request_id is longer than " + maxId + " bytes");
        }
        InputKind input = InputKind.of(request);
        if (input == null) {
            throw GenerateRefusal.invalid("one of prompt or token_ids (or, for a chat, extra.messages) is required");
        }
        if (!route.capabilities().inputs().contains(input)) {
            throw GenerateRefusal.unsupported("route " + route.name() + " (" + route.family() + ") does not carry "
                    + (input == InputKind.CHAT_MESSAGES ? "chat requests (extra.messages)"
                            : input.name().toLowerCase(java.util.Locale.ROOT) + " prompts"));
        }
        if (request.getKv().hasSession() && !sessionAllowed) {
            throw GenerateRefusal.invalid("kv.session is set: an orchestrated Generate gets its session from Handoff;"
                    + " a framework that drives the legs itself names the leg in the handoff-leg metadata");
        }
        int outputs = outputs(request);
        if (outputs > route.capabilities().maxOutputs()) {
            throw GenerateRefusal.unsupported("sampling.num_sequences " + outputs + " is more than route "
                    + route.name() + " carries (" + route.capabilities().maxOutputs() + ")");
        }
        fitsContext(route, request);
    }

    /**
     * A request the engines would refuse for its length is refused here, before anything is allocated: max_tokens
     * alone longer than the route's context, or token ids and max_tokens together. A text prompt's length in tokens
     * is the engine's to count; that check stays the engine's.
     */
    private static void fitsContext(Route route, GenerateRequest request) {
        OptionalInt context = route.contextLength();
        if (context.isEmpty()) {
            return;
        }
        long maxTokens = request.getStopping().hasMaxTokens()
                ? Integer.toUnsignedLong(request.getStopping().getMaxTokens()) : 0;
        long promptTokens = request.hasTokenIds() ? request.getTokenIds().getIdsCount() : 0;
        if (maxTokens > context.getAsInt()) {
            throw GenerateRefusal.invalid("stopping.max_tokens " + maxTokens + " is more than the context length of "
                    + "route " + route.name() + " (" + context.getAsInt() + " tokens)");
        }
        if (promptTokens + maxTokens > context.getAsInt()) {
            throw GenerateRefusal.invalid("the prompt's " + promptTokens + " tokens and stopping.max_tokens "
                    + maxTokens + " are more than the context length of route " + route.name() + " ("
                    + context.getAsInt() + " tokens)");
        }
    }

    private static int outputs(GenerateRequest request) {
        if (!request.getSampling().hasNumSequences()) {
            return 1;
        }
        int n = request.getSampling().getNumSequences();
        if (n < 1) {
            throw GenerateRefusal.invalid("sampling.num_sequences must be at least 1 when set");
        }
        return n;
    }

    private static ScheduleStyle style(Route route, GenerateRequest request) {
        KvScheduleStyle asked = request.getKv().getScheduleStyle();
        if (asked == KvScheduleStyle.KV_SCHEDULE_STYLE_UNSPECIFIED) {
            return route.settings().defaultStyle();
        }
        ScheduleStyle style = switch (asked) {
            case KV_SCHEDULE_STYLE_CONTEXT_FIRST -> ScheduleStyle.CONTEXT_FIRST;
            case KV_SCHEDULE_STYLE_GENERATION_FIRST -> ScheduleStyle.GENERATION_FIRST;
            case KV_SCHEDULE_STYLE_CONCURRENT -> ScheduleStyle.CONCURRENT;
            default -> throw GenerateRefusal.invalid("kv.schedule_style " + asked + " is not a known style");
        };
        if (!route.allows(style)) {
            throw GenerateRefusal.unsupported("schedule style " + style.configName() + " is not enabled on route "
                    + route.name() + " (enabled: " + route.settings().styles().stream().map(ScheduleStyle::configName)
                            .sorted().toList() + ")");
        }
        return style;
    }

    private static Optional<Trigger> bypass(Route route, GenerateRequest request) {
        BypassPolicy policy = route.settings().bypass();
        KvTransferDisposition disposition = request.getKv().getTransferDisposition();
        if (disposition == KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS) {
            if (!policy.has(Trigger.EXPLICIT) && !policy.has(Trigger.ALWAYS)) {
                throw GenerateRefusal.unsupported("route " + route.name() + " does not allow transfer disposition "
                        + "BYPASS (bypass.when does not include explicit)");
            }
            return Optional.of(policy.has(Trigger.ALWAYS) ? Trigger.ALWAYS : Trigger.EXPLICIT);
        }
        if (disposition == KvTransferDisposition.KV_TRANSFER_DISPOSITION_REQUIRED) {
            return Optional.empty();
        }
        if (policy.has(Trigger.ALWAYS)) {
            return Optional.of(Trigger.ALWAYS);
        }
        if (policy.has(Trigger.SHORT_PROMPT) && BypassPolicy.promptTokens(request) < policy.shortPromptTokens()) {
            return Optional.of(Trigger.SHORT_PROMPT);
        }
        if (policy.has(Trigger.PREFILL_UNAVAILABLE) && !route.prefill().available()) {
            return Optional.of(Trigger.PREFILL_UNAVAILABLE);
        }
        return Optional.empty();
    }

    /**
     * The request as the engines receive it: the model named as the engines serve it, and without our own KvOptions
     * fields and our session ref, which are for the gateway (connectors add the engine's native handoff fields).
     */
    private static GenerateRequest forEngines(Route route, GenerateRequest request) {
        GenerateRequest.Builder b = request.toBuilder().setModel(route.settings().engineModel());
        if (request.hasKv()) {
            b.getKvBuilder().clearScheduleStyle().clearTransferDisposition().clearSession();
            if (b.getKv().equals(io.handoff.openengine.v1.KvOptions.getDefaultInstance())) {
                b.clearKv();
            }
        }
        return b.build();
    }

    // ---- bypass

    private Multi<GenerateResponse> bypassed(String tenant, Route route, ScheduleStyle style, GenerateRequest request,
            Trigger trigger, RequestTrace trace) {
        Reservation reservation = new Reservation(route, live);
        try {
            PooledEndpoint decode = reservation.takeDecode();
            plan(route, request, style, decode, decode);
            LiveRequests.RequestHandle handle = reservation.claim(tenant, request.getRequestId());
            BypassRun run = new BypassRun(tenant, request, route, decode, outputs(request), trace,
                    reservation::leave);
            handle.attach(run);
            reservation.accepted();
            String triggerName = trigger.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
            metrics.bypassed(route.name(), triggerName);
            trace.bypassed(triggerName);
            return run.stream();
        } catch (RuntimeException e) {
            reservation.cancel();
            throw e;
        }
    }

    // ---- orchestrated

    private Multi<GenerateResponse> orchestrated(String tenant, Route route, ScheduleStyle style,
            GenerateRequest request, RequestTrace trace) {
        Reservation reservation = new Reservation(route, live);
        try {
            PooledEndpoint prefill = reservation.takePrefill();
            PooledEndpoint decode = reservation.takeDecode();
            Handoff handoff = plan(route, request, style, prefill, decode);
            LiveRequests.RequestHandle handle = reservation.claim(tenant, request.getRequestId());
            AllocateCommand command = new AllocateCommand(request.getRequestId(), route.settings().model(),
                    request.getRequestId(), Optional.of(style), Optional.of(TransferDisposition.REQUIRED),
                    Optional.of(route.leaseDefault()), com.google.protobuf.Struct.getDefaultInstance(), route.name());
            // memoized: a client that goes away during the allocation cancels its wait, not the allocation, whose
            // session abandoned() then ends
            Uni<SessionStore.Allocation> allocating = sessions.allocateForGenerate(tenant, command,
                    trace.traceParent()).memoize().indefinitely();
            return allocating
                    .onFailure(SessionException.class).transform(f -> refusal((SessionException) f))
                    .onItem().transformToMulti(allocation -> {
                        if (!allocation.created()) {
                            throw new GenerateRefusal(ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, false, "request "
                                    + request.getRequestId() + " is already running (session "
                                    + allocation.session().id() + ")");
                        }
                        trace.session(allocation.session(), handoff.prefill(), handoff.decode());
                        return run(reservation, handle, new Admission(request.getRequestId(), tenant, route,
                                Admission.Legs.BOTH, handoff, allocation.session(), prefill, decode,
                                outputs(request), trace));
                    })
                    .onFailure(f -> !reservation.isAccepted()).invoke(f -> {
                        reservation.cancel();
                        if (f instanceof GenerateRefusal r) {
                            refused(route, r, trace);
                        }
                    })
                    .onCancellation().invoke(() -> abandoned(tenant, reservation, allocating));
        } catch (RuntimeException e) {
            reservation.cancel();
            throw e;
        }
    }

    private Multi<GenerateResponse> run(Reservation reservation, LiveRequests.RequestHandle handle,
            Admission admission) {
        HandoffRun run = new HandoffRun(admission, sessions, keeper, config.abortTimeout(), metrics,
                reservation::leave);
        keeper.keep(admission.tenant(), admission.session().id(), admission.session().lease(), run::sessionLost);
        handle.attach(run);
        reservation.accepted();
        metrics.accepted(admission.route().name(), admission.legs() == Admission.Legs.BOTH
                ? admission.handoff().style().configName() : "participant-" + admission.legs().name().toLowerCase(
                        java.util.Locale.ROOT));
        return run.stream();
    }

    // ---- participant mode: a framework allocated the session and sends each leg itself

    /**
     * A participant's prefill leg on the session it allocated through OpenEngineKv: the session must be this
     * tenant's, ALLOCATED, context-first, for a model of this route. Ends with PrefillReady carrying our ref.
     */
    public Multi<GenerateResponse> participantPrefill(String tenant, String sessionId, GenerateRequest request) {
        RequestTrace trace = tracing.currentRequest(request.getRequestId());
        return Multi.createFrom().deferred(() -> {
            Route route = route(request);
            trace.routed(route.name(), route.family(), "participant-prefill");
            validate(route, request, false);
            if (!route.allows(ScheduleStyle.CONTEXT_FIRST)) {
                throw GenerateRefusal.unsupported("route " + route.name() + " does not run context-first, the only "
                        + "style whose prefill leg a framework can send on its own");
            }
            GenerateRequest engines = forEngines(route, request);
            Reservation reservation = new Reservation(route, live);
            try {
                PooledEndpoint prefill = reservation.takePrefill();
                PooledEndpoint anyDecode = route.decode().members().get(0);
                Handoff handoff = plan(route, engines, ScheduleStyle.CONTEXT_FIRST, prefill, anyDecode);
                LiveRequests.RequestHandle handle = reservation.claim(tenant, request.getRequestId());
                return sessions.get(tenant, sessionId)
                        .onFailure(SessionException.class).transform(f -> sessionRefusal((SessionException) f))
                        .onItem().transformToMulti(session -> {
                            requireSession(session, route, io.handoff.gateway.session.SessionState.ALLOCATED);
                            if (session.style() != ScheduleStyle.CONTEXT_FIRST) {
                                throw GenerateRefusal.unsupported("session " + sessionId + " is "
                                        + session.style().configName() + "; a framework sends its own prefill leg "
                                        + "only for context-first sessions");
                            }
                            trace.session(session, handoff.prefill(), handoff.decode());
                            return run(reservation, handle, new Admission(request.getRequestId(), tenant, route,
                                    Admission.Legs.PREFILL, handoff, session, prefill, null, outputs(request), trace));
                        })
                        .onFailure(f -> !reservation.isAccepted()).invoke(f -> reservation.cancel());
            } catch (RuntimeException e) {
                reservation.cancel();
                throw e;
            }
        });
    }

    /**
     * A participant's decode leg. With kv.session (the ref of our PrefillReady) it attaches to that READY session
     * at the epoch the ref was issued at. Without one it runs only as a bypass: under an explicit BYPASS
     * disposition, on a route whose decode endpoints can prefill locally.
     */
    public Multi<GenerateResponse> participantDecode(String tenant, GenerateRequest request) {
        RequestTrace trace = tracing.currentRequest(request.getRequestId());
        return Multi.createFrom().deferred(() -> {
            Route route = route(request);
            trace.routed(route.name(), route.family(), "participant-decode");
            validate(route, request, true);
            GenerateRequest engines = forEngines(route, request);
            if (!request.getKv().hasSession()) {
                if (!route.capabilities().localPrefill()) {
                    throw GenerateRefusal.unsupported("a decode leg without kv.session needs decode endpoints that "
                            + "prefill locally; route " + route.name() + " has none");
                }
                if (request.getKv().getTransferDisposition() != KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS) {
                    throw GenerateRefusal.invalid("a decode leg without kv.session must say transfer disposition "
                            + "BYPASS");
                }
                return bypassed(tenant, route, route.settings().defaultStyle(), engines, Trigger.EXPLICIT, trace);
            }
            ParticipantRef.Presented ref = ParticipantRef.read(request.getKv().getSession());
            if (!ref.route().equals(route.name())) {
                throw GenerateRefusal.invalid("kv.session was issued by route " + ref.route() + ", not by route "
                        + route.name() + " which serves model " + request.getModel());
            }
            Reservation reservation = new Reservation(route, live);
            try {
                PooledEndpoint decode = reservation.takeDecode();
                Handoff handoff = ref.handoff(request.getRequestId(), engines, route, decode);
                LiveRequests.RequestHandle handle = reservation.claim(tenant, request.getRequestId());
                return sessions.get(tenant, ref.sessionId())
                        .onFailure(SessionException.class).transform(f -> sessionRefusal((SessionException) f))
                        .onItem().transformToMulti(session -> {
                            requireSession(session, route, io.handoff.gateway.session.SessionState.READY);
                            if (session.epoch() != ref.epoch()) {
                                throw new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, false,
                                        "kv.session was issued at epoch " + ref.epoch() + " but session "
                                                + session.id() + " is at epoch " + session.epoch());
                            }
                            trace.session(session, handoff.prefill(), handoff.decode());
                            return run(reservation, handle, new Admission(request.getRequestId(), tenant, route,
                                    Admission.Legs.DECODE, handoff, session, null, decode, outputs(request), trace));
                        })
                        .onFailure(f -> !reservation.isAccepted()).invoke(f -> reservation.cancel());
            } catch (RuntimeException e) {
                reservation.cancel();
                throw e;
            }
        });
    }

    private void requireSession(io.handoff.gateway.session.Session session, Route route,
            io.handoff.gateway.session.SessionState expected) {
        if (session.state() != expected) {
            throw new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, false, "session " + session.id()
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

    private static GenerateRefusal sessionRefusal(SessionException f) {
        return switch (f.failure()) {
            case NOT_FOUND, NOT_LIVE -> new GenerateRefusal(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND, false,
                    f.getMessage());
            default -> refusal(f);
        };
    }

    /**
     * The client went away before its request was accepted, while the session was being allocated: what admission
     * took is given back, and the session the store allocates anyway is ended, so that nothing holds the request id
     * (a retry would otherwise be refused as a duplicate until the session's lease ran out). Once accepted, this does
     * nothing: the run ends the session and gives everything back.
     */
    private void abandoned(String tenant, Reservation reservation, Uni<SessionStore.Allocation> allocation) {
        if (reservation.isAccepted()) {
            return;
        }
        reservation.cancel();
        allocation.subscribe().with(a -> {
            if (a.created() && !reservation.isAccepted()) {
                sessions.transition(tenant, a.session().id(), SessionState.CANCELLED,
                        "the client went away before the request was accepted", OptionalLong.of(a.session().epoch()))
                        .subscribe().with(t -> { }, f -> LOG.warnf("request %s: session %s not ended: %s",
                                a.session().requestId(), a.session().id(), f.getMessage()));
            }
        }, f -> { });
    }

    private static Handoff plan(Route route, GenerateRequest request, ScheduleStyle style, PooledEndpoint prefill,
            PooledEndpoint decode) {
        try {
            return route.connector().plan(request.getRequestId(), style, request, prefill.endpoint(),
                    decode.endpoint());
        } catch (EngineException e) {
            throw new GenerateRefusal(e.code(), e.retryable(), e.getMessage());
        }
    }

    private static GenerateRefusal refusal(SessionException f) {
        return switch (f.failure()) {
            case QUOTA_EXCEEDED, STORE_UNAVAILABLE -> GenerateRefusal.overloaded(f.getMessage());
            case DRAINING -> new GenerateRefusal(ErrorCode.ERROR_CODE_DRAINING, true, f.getMessage());
            case UNSUPPORTED -> GenerateRefusal.unsupported(f.getMessage());
            default -> GenerateRefusal.invalid(f.getMessage());
        };
    }
}
