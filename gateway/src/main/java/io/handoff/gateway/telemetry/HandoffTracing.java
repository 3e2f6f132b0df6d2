package io.handoff.gateway.telemetry;

import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.smallrye.mutiny.Uni;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

/**
 * One trace per request. The gRPC server instrumentation starts the Generate span (and continues the client's
 * trace from its traceparent metadata); this class adds Handoff's view to it and around it: the request's attributes
 * and session lifecycle events ({@link RequestTrace}), one CLIENT span per leg whose W3C context the connectors
 * forward to the engines, and the reaper's and cleanup's spans, linked to the trace of the request that allocated the
 * session they act on. Span names, attributes and events are listed in docs/api.md ("Tracing").
 */
public final class HandoffTracing {

    static final String INSTRUMENTATION = "io.handoff.gateway";

    public static final String SESSION_END_SPAN = "handoff.session.end";
    public static final AttributeKey<String> REQUEST_ID = stringKey("handoff.request.id");
    public static final AttributeKey<String> ROUTE = stringKey("handoff.route");
    public static final AttributeKey<String> FAMILY = stringKey("handoff.engine.family");
    public static final AttributeKey<String> STYLE = stringKey("handoff.style");
    public static final AttributeKey<String> BYPASS_TRIGGER = stringKey("handoff.bypass.trigger");
    public static final AttributeKey<String> OUTCOME = stringKey("handoff.outcome");
    public static final AttributeKey<String> REFUSAL_CODE = stringKey("handoff.refusal.code");
    public static final AttributeKey<String> REFUSAL_REASON = stringKey("handoff.refusal.reason");
    public static final AttributeKey<String> SESSION_ID = stringKey("handoff.session.id");
    public static final AttributeKey<Long> SESSION_EPOCH = longKey("handoff.session.epoch");
    public static final AttributeKey<String> SESSION_STATE = stringKey("handoff.session.state");
    public static final AttributeKey<String> DISPOSITION = stringKey("handoff.disposition");
    public static final AttributeKey<String> REASON = stringKey("handoff.reason");
    public static final AttributeKey<String> PREFILL_ENDPOINT = stringKey("handoff.endpoint.prefill");
    public static final AttributeKey<String> DECODE_ENDPOINT = stringKey("handoff.endpoint.decode");
    public static final AttributeKey<String> LEG = stringKey("handoff.leg");
    public static final AttributeKey<Long> LEG_ATTEMPT = longKey("handoff.leg.attempt");
    public static final AttributeKey<String> ENDPOINT_NAME = stringKey("handoff.endpoint.name");
    public static final AttributeKey<String> ENDPOINT_URI = stringKey("handoff.endpoint.uri");
    public static final AttributeKey<String> SERVER_ADDRESS = stringKey("server.address");
    public static final AttributeKey<Long> SERVER_PORT = longKey("server.port");
    public static final AttributeKey<String> ERROR_TYPE = stringKey("error.type");
    public static final AttributeKey<String> OBLIGATION_ID = stringKey("handoff.obligation.id");
    public static final AttributeKey<String> OBLIGATION_ENDPOINT = stringKey("handoff.obligation.endpoint");
    public static final AttributeKey<String> OBLIGATION_RESOURCE = stringKey("handoff.obligation.resource");
    public static final AttributeKey<String> OBLIGATION_STATUS = stringKey("handoff.obligation.status");
    public static final AttributeKey<Long> OBLIGATION_ATTEMPTS = longKey("handoff.obligation.attempts");
    public static final AttributeKey<String> CLEANUP_WRITTEN = stringKey("handoff.cleanup.written");

    private static final TextMapGetter<Map<String, String>> MAP_GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    public HandoffTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    /** For code built outside CDI (tests, tools) that has nothing to trace to. */
    public static HandoffTracing disabled() {
        return new HandoffTracing(OpenTelemetry.noop());
    }

    /**
     * The request now running, as the gRPC server instrumentation made it current: call it on the thread that
     * received the call, before anything asynchronous. Outside a traced call it is a trace that records nothing.
     */
    public RequestTrace currentRequest(String requestId) {
        Context context = Context.current();
        Span span = Span.fromContext(context);
        span.setAttribute(REQUEST_ID, requestId);
        return new RequestTrace(this, context, span);
    }

    // ---- the legs (used by RequestTrace)

    Span startLeg(Context request, TracedLeg leg, Attributes attributes) {
        return tracer.spanBuilder("handoff.leg " + leg.wireName())
                .setParent(request)
                .setSpanKind(SpanKind.CLIENT)
                .setAllAttributes(attributes)
                .setAttribute(LEG, leg.wireName())
                .startSpan();
    }

    /** The span of a session's end written after its Generate call ended, under the Generate span. */
    Span startSessionEnd(Context request, Attributes attributes) {
        return tracer.spanBuilder(SESSION_END_SPAN)
                .setParent(request)
                .setSpanKind(SpanKind.INTERNAL)
                .setAllAttributes(attributes)
                .startSpan();
    }

    /** The headers that carry a leg span's context to its engine, in the configured propagators' format. */
    Map<String, String> forwardOf(Context request, Span leg) {
        Map<String, String> headers = new HashMap<>();
        propagator.inject(request.with(leg), headers, Map::put);
        return headers;
    }

    // ---- the reaper and cleanup

    /**
     * Runs one reaper action on a session as a {@code handoff.reap} span, linked to the trace of the request that
     * allocated the session; an expiry is its {@code session.expired} event. {@code action} gets the context under
     * which its own spans (the cleanup) belong.
     */
    public <T> Uni<T> reap(Session session, boolean expired, Function<Context, Uni<T>> action) {
        return Uni.createFrom().deferred(() -> {
            Span span = linkedTo(session, tracer.spanBuilder("handoff.reap").setNoParent())
                    .setSpanKind(SpanKind.INTERNAL)
                    .setAllAttributes(sessionAttributes(session).build())
                    .startSpan();
            if (expired) {
                span.addEvent(eventName(session.state()), sessionAttributes(session).build());
            }
            return Uni.createFrom().deferred(() -> action.apply(Context.root().with(span)))
                    .onTermination().invoke((item, failure, cancelled) -> {
                        if (failure != null) {
                            failed(span, failure);
                        }
                        span.end();
                    });
        });
    }

    /**
     * Runs the discharge of a session's claimed obligations as a {@code handoff.cleanup} span: a child of
     * {@code parent} when the reaper runs it, a root of its own when a request's ending hands it over (it outlives
     * the request); linked to the trace of the request that allocated the session either way.
     */
    public <T> Uni<T> cleanup(Session session, Context parent, Function<CleanupTrace, Uni<T>> discharge) {
        return Uni.createFrom().deferred(() -> {
            SpanBuilder builder = tracer.spanBuilder("handoff.cleanup");
            if (parent == null) {
                builder.setNoParent();
            } else {
                builder.setParent(parent);
            }
            Span span = linkedTo(session, builder)
                    .setSpanKind(SpanKind.INTERNAL)
                    .setAllAttributes(sessionAttributes(session).build())
                    .startSpan();
            return Uni.createFrom().deferred(() -> discharge.apply(new CleanupTrace(span)))
                    .onTermination().invoke((item, failure, cancelled) -> {
                        if (failure != null) {
                            failed(span, failure);
                        }
                        span.end();
                    });
        });
    }

    /** What a cleanup records on its span as it goes. */
    public static final class CleanupTrace {
        private final Span span;

        CleanupTrace(Span span) {
            this.span = span;
        }

        /** One obligation's outcome, as an {@code obligation.settled} event. */
        public void settled(CleanupObligation o) {
            AttributesBuilder b = Attributes.builder()
                    .put(OBLIGATION_ID, o.id())
                    .put(OBLIGATION_ENDPOINT, o.endpoint())
                    .put(OBLIGATION_RESOURCE, o.resource())
                    .put(OBLIGATION_STATUS, o.status().name())
                    .put(OBLIGATION_ATTEMPTS, (long) o.attempts());
            if (o.lastError() != null) {
                b.put(REASON, o.lastError());
            }
            span.addEvent("obligation.settled", b.build());
        }

        /** Whether the outcome was written back; a lost claim means another replica took the cleanup over. */
        public void written(boolean written) {
            span.setAttribute(CLEANUP_WRITTEN, Boolean.toString(written));
        }
    }

    // ---- shared

    /** The W3C traceparent of a context's span, or "" when it has none worth linking to. */
    static String traceParentOf(Context context) {
        Map<String, String> headers = new HashMap<>();
        W3CTraceContextPropagator.getInstance().inject(context, headers, Map::put);
        return headers.getOrDefault("traceparent", "");
    }

    private static SpanBuilder linkedTo(Session session, SpanBuilder builder) {
        if (session.traceParent().isEmpty()) {
            return builder;
        }
        SpanContext origin = Span.fromContext(W3CTraceContextPropagator.getInstance().extract(Context.root(),
                Map.of("traceparent", session.traceParent()), MAP_GETTER)).getSpanContext();
        return origin.isValid() ? builder.addLink(origin) : builder;
    }

    static String eventName(SessionState state) {
        return "session." + state.name().toLowerCase(Locale.ROOT);
    }

    static AttributesBuilder sessionAttributes(Session session) {
        AttributesBuilder b = Attributes.builder()
                .put(SESSION_ID, session.id())
                .put(SESSION_EPOCH, session.epoch())
                .put(SESSION_STATE, session.state().name())
                .put(STYLE, session.style().configName())
                .put(DISPOSITION, session.disposition().name())
                .put(ROUTE, session.route());
        if (session.isTerminal() && session.terminalReason() != null && !session.terminalReason().isEmpty()) {
            b.put(REASON, session.terminalReason());
        }
        return b;
    }

    static void failed(Span span, Throwable failure) {
        span.setStatus(StatusCode.ERROR, String.valueOf(failure.getMessage()));
        span.recordException(failure);
    }
}
