package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.routing.BypassPolicy;
import io.handoff.gateway.routing.BypassPolicy.Trigger;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.routing.RouteRegistry;
import io.handoff.gateway.session.AllocateCommand;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionService;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TransferDisposition;
import io.handoff.gateway.session.store.SessionStore;
import io.handoff.gateway.telemetry.HandoffMetrics;
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
import java.util.OptionalLong;
import java.util.Set;
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
    private final OrchestrationConfig config;

    public GenerateOrchestrator(RouteRegistry routes, SessionService sessions, LeaseKeeper keeper, LiveRequests live,
            HandoffMetrics metrics, OrchestrationConfig config) {
        this.routes = routes;
        this.sessions = sessions;
        this.keeper = keeper;
        this.live = live;
        this.metrics = metrics;
        this.config = config;
    }

    /**
     * Runs one Generate for a tenant. A refusal before acceptance fails the stream with {@link GenerateRefusal};
     * after acceptance the stream never fails: a failure is its one terminal EngineError.
     */
    public Multi<GenerateResponse> generate(String tenant, GenerateRequest request) {
        return Multi.createFrom().deferred(() -> {
            Route route = route(request);
            try {
                validate(route, request);
                ScheduleStyle style = style(route, request);
                Optional<Trigger> bypass = bypass(route, request);
                GenerateRequest forEngines = forEngines(route, request);
                return bypass.isPresent()
                        ? bypassed(tenant, route, style, forEngines, bypass.get())
                        : orchestrated(tenant, route, style, forEngines);
            } catch (GenerateRefusal refusal) {
                metrics.refused(route.name(), refusal.code().name());
                throw refusal;
            }
        });
    }

    // ---- steps before acceptance

    private Route route(GenerateRequest request) {
        if (request.getModel().isEmpty()) {
            throw GenerateRefusal.invalid("model is required");
        }
        return routes.forModel(request.getModel()).orElseThrow(() -> new GenerateRefusal(
                ErrorCode.ERROR_CODE_MODEL_NOT_FOUND, false, "no route serves model '" + request.getModel() + "'"));
    }

    private void validate(Route route, GenerateRequest request) {
        String id = request.getRequestId();
        if (id.isEmpty()) {
            throw GenerateRefusal.invalid("request_id is required");
        }
        int maxId = sessions.policy().maxIdBytes();
        if (id.getBytes(StandardCharsets.UTF_8).length > maxId) {
            throw GenerateRefusal.invalid("request_id is longer than " + maxId + " bytes");
        }
        if (!request.hasPrompt() && !request.hasTokenIds()) {
            throw GenerateRefusal.invalid("one of prompt or token_ids is required");
        }
        if (request.getKv().hasSession()) {
            throw GenerateRefusal.invalid("kv.session is set: an orchestrated Generate gets its session from Handoff;"
                    + " a framework that drives the legs itself names the leg in the handoff-leg metadata");
        }
        int outputs = outputs(request);
        if (outputs > route.capabilities().maxOutputs()) {
            throw GenerateRefusal.unsupported("sampling.num_sequences " + outputs + " is more than route "
                    + route.name() + " carries (" + route.capabilities().maxOutputs() + ")");
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
     * fields, which are for the gateway.
     */
    private static GenerateRequest forEngines(Route route, GenerateRequest request) {
        GenerateRequest.Builder b = request.toBuilder().setModel(route.settings().engineModel());
        if (request.hasKv()) {
            b.getKvBuilder().clearScheduleStyle().clearTransferDisposition();
            if (b.getKv().equals(io.handoff.openengine.v1.KvOptions.getDefaultInstance())) {
                b.clearKv();
            }
        }
        return b.build();
    }

    // ---- bypass

    private Multi<GenerateResponse> bypassed(String tenant, Route route, ScheduleStyle style, GenerateRequest request,
            Trigger trigger) {
        Reservation reservation = new Reservation(route);
        try {
            PooledEndpoint decode = reservation.decode(route.decode().acquire(Set.of()).orElseThrow(() ->
                    GenerateRefusal.overloaded("no decode endpoint of route " + route.name() + " is available")));
            plan(route, request, style, decode, decode);
            LiveRequests.RequestHandle handle = reservation.claim(live, tenant, request.getRequestId());
            BypassRun run = new BypassRun(tenant, request, route, decode, outputs(request), reservation::leave);
            handle.attach(run);
            reservation.accepted();
            metrics.bypassed(route.name(), trigger.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
            return run.stream();
        } catch (RuntimeException e) {
            reservation.cancel();
            throw e;
        }
    }

    // ---- orchestrated

    private Multi<GenerateResponse> orchestrated(String tenant, Route route, ScheduleStyle style,
            GenerateRequest request) {
        Reservation reservation = new Reservation(route);
        try {
            PooledEndpoint prefill = reservation.prefill(route.prefill().acquire(Set.of()).orElseThrow(() ->
                    GenerateRefusal.overloaded("no prefill endpoint of route " + route.name() + " is available")));
            PooledEndpoint decode = reservation.decode(route.decode().acquire(Set.of()).orElseThrow(() ->
                    GenerateRefusal.overloaded("no decode endpoint of route " + route.name() + " is available")));
            Handoff handoff = plan(route, request, style, prefill, decode);
            LiveRequests.RequestHandle handle = reservation.claim(live, tenant, request.getRequestId());
            AllocateCommand command = new AllocateCommand(request.getRequestId(), route.settings().model(),
                    request.getRequestId(), Optional.of(style), Optional.of(TransferDisposition.REQUIRED),
                    Optional.of(route.leaseDefault()), com.google.protobuf.Struct.getDefaultInstance(), route.name());
            // memoized: a client that goes away during the allocation cancels its wait, not the allocation, whose
            // session abandoned() then ends
            Uni<SessionStore.Allocation> allocating = sessions.allocateForGenerate(tenant, command).memoize()
                    .indefinitely();
            return allocating
                    .onFailure(SessionException.class).transform(f -> refusal((SessionException) f))
                    .onItem().transformToMulti(allocation -> {
                        if (!allocation.created()) {
                            throw new GenerateRefusal(ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, false, "request "
                                    + request.getRequestId() + " is already running (session "
                                    + allocation.session().id() + ")");
                        }
                        Admission admission = new Admission(request.getRequestId(), tenant, route, handoff,
                                allocation.session(), prefill, decode, outputs(request));
                        HandoffRun run = new HandoffRun(admission, sessions, keeper, config.abortTimeout(),
                                reservation::leave);
                        keeper.keep(tenant, allocation.session().id(), allocation.session().lease(),
                                run::sessionLost);
                        handle.attach(run);
                        reservation.accepted();
                        metrics.accepted(route.name(), style.configName());
                        return run.stream();
                    })
                    .onFailure(f -> !reservation.isAccepted()).invoke(f -> {
                        reservation.cancel();
                        if (f instanceof GenerateRefusal r) {
                            metrics.refused(route.name(), r.code().name());
                        }
                    })
                    .onCancellation().invoke(() -> abandoned(tenant, reservation, allocating));
        } catch (RuntimeException e) {
            reservation.cancel();
            throw e;
        }
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
            case UNSUPPORTED -> GenerateRefusal.unsupported(f.getMessage());
            default -> GenerateRefusal.invalid(f.getMessage());
        };
    }

    /**
     * What admission has taken so far: a place in the route's bulkhead, endpoints, the request id. Given back at
     * once on refusal; after acceptance the run gives back the endpoints and calls {@link #leave()}.
     */
    private final class Reservation {
        private final Route route;
        private final AtomicBoolean accepted = new AtomicBoolean();
        private final AtomicBoolean left = new AtomicBoolean();
        private PooledEndpoint prefill;
        private PooledEndpoint decode;
        private LiveRequests.RequestHandle handle;

        Reservation(Route route) {
            if (!route.admit()) {
                throw GenerateRefusal.overloaded("route " + route.name() + " is at its limit of "
                        + route.settings().maxInFlight() + " requests in flight");
            }
            this.route = route;
        }

        PooledEndpoint prefill(PooledEndpoint e) {
            prefill = e;
            return e;
        }

        PooledEndpoint decode(PooledEndpoint e) {
            decode = e;
            return e;
        }

        LiveRequests.RequestHandle claim(LiveRequests live, String tenant, String requestId) {
            handle = live.claim(tenant, requestId).orElseThrow(() -> new GenerateRefusal(
                    ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, false, "request " + requestId + " is already running"));
            return handle;
        }

        void accepted() {
            accepted.set(true);
        }

        boolean isAccepted() {
            return accepted.get();
        }

        /** Refused: endpoints back without counting against them, the id and the bulkhead place freed. */
        void cancel() {
            if (accepted.get()) {
                return;
            }
            if (prefill != null) {
                prefill.giveBack();
            }
            if (decode != null) {
                decode.giveBack();
            }
            leave();
        }

        void leave() {
            if (left.compareAndSet(false, true)) {
                if (handle != null) {
                    live.unregister(handle.tenant(), handle.requestId(), handle);
                }
                route.leave();
            }
        }
    }
}
