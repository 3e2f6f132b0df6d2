package io.handoff.connector.openengine;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.handoff.connector.spi.ConnectorCapabilities;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.DischargeResult;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.Leg;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AbortResponse;
import io.handoff.openengine.v1.AbortStatus;
import io.handoff.openengine.v1.ControlGrpc;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GetLoadRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.GetServerInfoRequest;
import io.handoff.openengine.v1.HealthRequest;
import io.handoff.openengine.v1.HealthResponse;
import io.handoff.openengine.v1.InferenceGrpc;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.LoadInfo;
import io.handoff.openengine.v1.ModelInfo;
import io.handoff.openengine.v1.ServerInfo;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** The openengine connector of one route; see the package documentation and {@code mappings/openengine.md}. */
final class OpenEngineConnector implements EngineConnector {
    static final String PREFILL_REQUEST_ID = "prefill_request_id";
    static final String DECODE_REQUEST_ID = "decode_request_id";
    static final String HELD_RESOURCE = "parked-prefill-kv";
    static final String HELD_REQUEST_ID = "request_id";

    private final ConnectorConfig config;
    private final OpenEngineOptions options;
    private final ConnectorCapabilities capabilities;
    private final Clock clock;
    private final Channels channels = new Channels();
    private final ConsumedSessions consumed;

    OpenEngineConnector(ConnectorConfig config, OpenEngineOptions options, ConnectorCapabilities capabilities,
        Clock clock) {
        this.config = config;
        this.options = options;
        this.capabilities = capabilities;
        this.clock = clock;
        this.consumed = new ConsumedSessions(clock);
    }

    @Override
    public ConnectorCapabilities capabilities() {
        return capabilities;
    }

    // ------------------------------------------------------------------ plan

    @Override
    public Handoff plan(String requestId, ScheduleStyle style, GenerateRequest request, Endpoint prefill,
        Endpoint decode) {
        if (style != ScheduleStyle.CONTEXT_FIRST) {
            throw EngineException.unsupported("openengine engines hand off context-first only (prefill, then decode "
                + "with the returned KvSessionRef); " + style.configName() + " is not native to them");
        }
        if (request.hasKv() && request.getKv().hasSession()) {
            throw EngineException.invalid("kv.session is owned by the gateway, which attaches the producer's "
                + "session itself; a client may not name one");
        }
        checkCommon(requestId, request);
        List<String> refused = RequestFields.refusedIn(request);
        if (!refused.isEmpty()) {
            throw EngineException.unsupported(refused + ": prompt logprobs come from the prefill leg, and a "
                + "handoff cannot carry them to the client");
        }
        int outputs = outputs(request);
        if (outputs > options.maxOutputs()) {
            throw EngineException.unsupported("sampling.num_sequences " + outputs + " exceeds this route's "
                + "max-outputs " + options.maxOutputs());
        }
        requireGrpc(prefill, "prefill");
        requireGrpc(decode, "decode");
        // the same id on both legs: they run on different engines, one after the other, and Abort finds each by it
        return new Handoff(requestId, style, request, prefill, decode,
            Map.of(PREFILL_REQUEST_ID, requestId, DECODE_REQUEST_ID, requestId), null);
    }

    private static void checkCommon(String requestId, GenerateRequest request) {
        if (requestId == null || requestId.isBlank()) {
            throw EngineException.invalid("a request id is required");
        }
        if (request.getInputCase() == GenerateRequest.InputCase.INPUT_NOT_SET) {
            throw EngineException.invalid("one of prompt or token_ids is required");
        }
    }

    private static void requireGrpc(Endpoint e, String leg) {
        if (e == null || !"grpc".equals(e.uri().getScheme())) {
            throw EngineException.invalid("the " + leg + " endpoint must be grpc://host:port, not " + e);
        }
    }

    private static int outputs(GenerateRequest request) {
        return request.getSampling().hasNumSequences() ? Math.max(1, request.getSampling().getNumSequences()) : 1;
    }

    // ------------------------------------------------------------------ legs

    @Override
    public List<HeldKv> heldAfterCancelledPrefill(Handoff handoff) {
        // the session the engine parked is named only in the PrefillReady that was lost: it cannot be aborted, so
        // it is counted until the engine's timer frees it
        Endpoint ep = handoff.prefill();
        String legId = handoff.nativeIds().getOrDefault(PREFILL_REQUEST_ID, handoff.requestId());
        return List.of(new HeldKv("prefill@" + ep.name(), ep, HELD_RESOURCE, Map.of(HELD_REQUEST_ID, legId),
            clock.instant().plus(options.hold()), false, false));
    }

    @Override
    public Uni<PrefillResult> prefill(Handoff handoff) {
        Endpoint ep = handoff.prefill();
        String legId = handoff.nativeIds().getOrDefault(PREFILL_REQUEST_ID, handoff.requestId());
        return Uni.createFrom().deferred(() -> {
            GenerateRequest wire = WireRequests.prefill(handoff.request(), legId, config.model());
            PrefillCollector collector = new PrefillCollector(ep.name(), outputs(handoff.request()));
            AtomicBoolean anyEvent = new AtomicBoolean();
            return generate(ep, wire, options.prefillTimeout(), handoff.forward())
                .onItem().invoke(e -> {
                    anyEvent.set(true);
                    EngineException bad = collector.accept(e);
                    if (bad != null) {
                        throw bad;
                    }
                })
                .onFailure().transform(t -> Failures.fromThrowable(t, Leg.PREFILL, anyEvent.get(), ep.name()))
                .onItem().ignoreAsUni()
                .map(v -> {
                    EngineException bad = collector.atEnd();
                    if (bad != null) {
                        throw bad;
                    }
                    return ready(handoff, collector, legId);
                });
        });
    }

    private PrefillResult ready(Handoff handoff, PrefillCollector collector, String legId) {
        KvSessionRef ref = collector.ref();
        if (ref == null) {
            return new PrefillResult.Finished(collector.outputEvents(), List.of());
        }
        Endpoint ep = handoff.prefill();
        // the engine's timer started when it sent PrefillReady, a moment before now: now + hold is an upper bound
        Instant heldUntil = clock.instant().plus(options.hold());
        HeldKv held = new HeldKv("prefill@" + ep.name(), ep, HELD_RESOURCE,
            Map.of(SessionRefs.SESSION_ID, ref.getSessionId(), SessionRefs.REF, SessionRefs.encode(ref),
                HELD_REQUEST_ID, legId),
            heldUntil, options.abortCleanup(), true); // a pull of the parked session frees it
        return new PrefillResult.Ready(handoff.withTransferData(SessionRefs.transferData(ref, ep.name())),
            List.of(held));
    }

    @Override
    public Multi<GenerateResponse> decode(Handoff handoff) {
        return Multi.createFrom().deferred(() -> {
            KvSessionRef ref = SessionRefs.fromTransferData(handoff.transferData());
            String legId = handoff.nativeIds().getOrDefault(DECODE_REQUEST_ID, handoff.requestId());
            GenerateRequest wire = WireRequests.decode(handoff.request(), legId, config.model(), ref);
            return relay(handoff.decode(), wire, outputs(handoff.request()), ref.getSessionId(), handoff.forward());
        });
    }

    @Override
    public Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode,
        Map<String, String> forward) {
        return Multi.createFrom().deferred(() -> {
            if (request.hasKv() && request.getKv().hasSession()) {
                throw EngineException.invalid("kv.session is owned by the gateway; a bypass carries none");
            }
            checkCommon(requestId, request);
            requireGrpc(decode, "decode");
            return relay(decode, WireRequests.local(request, requestId, config.model()), outputs(request), null,
                forward);
        });
    }

    /** Relays a decode stream after checking each event against the upstream rules. */
    private Multi<GenerateResponse> relay(Endpoint ep, GenerateRequest wire, int outputs, String sessionId,
        Map<String, String> forward) {
        DecodeEventRules rules = new DecodeEventRules(outputs, ep.name());
        AtomicBoolean anyEvent = new AtomicBoolean();
        AtomicBoolean markedConsumed = new AtomicBoolean();
        Multi<GenerateResponse> events = generate(ep, wire, options.decodeTimeout(), forward)
            .onItem().invoke(e -> {
                anyEvent.set(true);
                EngineException bad = rules.check(e);
                if (bad != null) {
                    throw bad;
                }
                if (sessionId != null && rules.producedTokens() && markedConsumed.compareAndSet(false, true)) {
                    consumed.consumed(sessionId, clock.instant().plus(options.hold()));
                }
            })
            .onFailure().transform(t -> Failures.fromThrowable(t, Leg.DECODE, anyEvent.get(), ep.name()));
        Multi<GenerateResponse> end = Multi.createFrom().deferred(() -> {
            EngineException bad = rules.atEnd();
            return bad == null ? Multi.createFrom().empty() : Multi.createFrom().failure(bad);
        });
        return Multi.createBy().concatenating().streams(events, end);
    }

    /** One Generate on an engine, with the gateway's forwarded headers (trace context) as its gRPC metadata. */
    private Multi<GenerateResponse> generate(Endpoint ep, GenerateRequest wire, Duration timeout,
        Map<String, String> forward) {
        return GrpcCalls.stream(() -> wire, (q, o) -> {
            InferenceGrpc.InferenceStub stub = InferenceGrpc.newStub(channels.to(ep));
            if (!forward.isEmpty()) {
                stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata(forward)));
            }
            if (!timeout.isZero()) {
                stub = stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            stub.generate(q, o);
        });
    }

    private static Metadata metadata(Map<String, String> forward) {
        Metadata metadata = new Metadata();
        forward.forEach((name, value) -> metadata.put(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER),
            value));
        return metadata;
    }

    // ------------------------------------------------------------------ control

    private ControlGrpc.ControlStub control(Endpoint ep) {
        return ControlGrpc.newStub(channels.to(ep)).withDeadlineAfter(options.controlTimeout().toMillis(),
            TimeUnit.MILLISECONDS);
    }

    @Override
    public Uni<Void> abort(Handoff handoff, Leg leg) {
        Endpoint ep = leg == Leg.PREFILL ? handoff.prefill() : handoff.decode();
        String id = handoff.nativeIds().getOrDefault(leg == Leg.PREFILL ? PREFILL_REQUEST_ID : DECODE_REQUEST_ID,
            handoff.requestId());
        AbortRequest req = AbortRequest.newBuilder().setRequestId(id).build();
        return GrpcCalls.<AbortRequest, AbortResponse>unary(() -> req, (q, o) -> control(ep).abort(q, o))
            .replaceWithVoid()
            .onFailure().recoverWithUni(t -> {
                Status.Code code = Status.fromThrowable(t).getCode();
                // nothing running under that id (never arrived, or long finished), or no abort RPC: the gateway's
                // cancel of the leg's stream is then the abort
                if (code == Status.Code.NOT_FOUND || code == Status.Code.UNIMPLEMENTED) {
                    return Uni.createFrom().voidItem();
                }
                return Uni.createFrom().failure(Failures.fromThrowable(t, leg, true, ep.name()));
            });
    }

    @Override
    public Uni<DischargeResult> discharge(HeldKv held) {
        return Uni.createFrom().deferred(() -> {
            String sid = held.handle().get(SessionRefs.SESSION_ID);
            if (consumed.wasConsumed(sid)) {
                return Uni.createFrom().item(DischargeResult.released());
            }
            if (held.heldUntil() != null && !clock.instant().isBefore(held.heldUntil())) {
                // the engine's own timer has run: heldUntil is at or after the engine's deadline
                return Uni.createFrom().item(DischargeResult.released());
            }
            String refText = held.handle().get(SessionRefs.REF);
            // a hold with no session ref (the parked session of a cancelled prefill, whose PrefillReady was lost)
            // cannot be named in an Abort; the gateway does not keep releasable in its obligations, the handle does
            if (refText == null || !options.abortCleanup() || !held.releasable()) {
                return Uni.createFrom().item(DischargeResult.engineHoldsUntil(held.heldUntil()));
            }
            KvSessionRef ref = SessionRefs.decode(refText);
            AbortRequest req = AbortRequest.newBuilder().setKvSession(ref).build();
            return GrpcCalls.<AbortRequest, AbortResponse>unary(() -> req, (q, o) -> control(held.endpoint()).abort(q,
                o))
                .map(r -> r.getStatus() == AbortStatus.ABORT_STATUS_ABORTED ? DischargeResult.released()
                    : DischargeResult.engineHoldsUntil(held.heldUntil()))
                .onFailure().recoverWithItem(t -> {
                    Status s = Status.fromThrowable(t);
                    if (s.getCode() == Status.Code.NOT_FOUND) {
                        return DischargeResult.released(); // pulled, expired, or lost with a restart
                    }
                    if (s.getCode() == Status.Code.UNIMPLEMENTED) {
                        return DischargeResult.engineHoldsUntil(held.heldUntil());
                    }
                    return DischargeResult.retry(held.endpoint().name() + ": " + s);
                });
        });
    }

    @Override
    public Uni<EndpointStatus> probe(Endpoint endpoint) {
        return Uni.createFrom().deferred(() -> {
            var info = GrpcCalls.<GetServerInfoRequest, ServerInfo>unary(
                GetServerInfoRequest::getDefaultInstance, (q, o) -> control(endpoint).getServerInfo(q, o));
            var health = GrpcCalls.<HealthRequest, HealthResponse>unary(
                HealthRequest::getDefaultInstance, (q, o) -> control(endpoint).health(q, o));
            // load and model info are optional surfaces: an engine without them is still usable
            var load = GrpcCalls.<GetLoadRequest, LoadInfo>unary(
                GetLoadRequest::getDefaultInstance, (q, o) -> control(endpoint).getLoad(q, o))
                .onFailure().recoverWithNull();
            var model = GrpcCalls.<GetModelInfoRequest, ModelInfo>unary(
                () -> GetModelInfoRequest.newBuilder().setModel(config.model() == null ? "" : config.model()).build(),
                (q, o) -> control(endpoint).getModelInfo(q, o))
                .onFailure().recoverWithNull();
            boolean inPrefill = config.prefillPool().stream().anyMatch(e -> e.uri().equals(endpoint.uri()));
            boolean inDecode = config.decodePool().stream().anyMatch(e -> e.uri().equals(endpoint.uri()));
            return Uni.combine().all().unis(info, health, load, model).asTuple()
                .map(t -> ProbeReport.status(endpoint, t.getItem1(), t.getItem2(), t.getItem3(), t.getItem4(),
                    options, inPrefill, inDecode))
                .onFailure().recoverWithItem(t -> ProbeReport.unreachable(endpoint, t));
        });
    }

    @Override
    public void close() {
        channels.close();
    }
}
