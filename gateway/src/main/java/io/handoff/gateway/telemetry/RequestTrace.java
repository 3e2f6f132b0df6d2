package io.handoff.gateway.telemetry;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.openengine.v1.GenerateResponse;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

import java.net.URI;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One Generate's part of the trace: its span (the gRPC server span) gets the request's attributes and the session
 * lifecycle as events, and each leg becomes a CLIENT span under it whose context the connector forwards to the
 * engine. Every method is safe on a request that is not traced (it records nothing then).
 */
public final class RequestTrace {

    private final HandoffTracing tracing;
    private final Context context;
    private final Span span;
    /** Where the session's events go: the Generate span, or the session's end's own once the call has ended. */
    private volatile Span sessionSpan;
    private volatile String route = "";
    private volatile String family = "";

    RequestTrace(HandoffTracing tracing, Context context, Span span) {
        this.tracing = tracing;
        this.context = context;
        this.span = span;
        this.sessionSpan = span;
    }

    /** The route that serves the request, its engine family and the style it runs in. */
    public void routed(String routeName, String engineFamily, String style) {
        route = routeName;
        family = engineFamily;
        span.setAttribute(HandoffTracing.ROUTE, routeName);
        span.setAttribute(HandoffTracing.FAMILY, engineFamily);
        span.setAttribute(HandoffTracing.STYLE, style);
    }

    public void bypassed(String trigger) {
        span.setAttribute(HandoffTracing.BYPASS_TRIGGER, trigger);
    }

    /** Refused before acceptance; the gRPC status on the span says the rest. */
    public void refused(String errorCode, String reason) {
        span.setAttribute(HandoffTracing.OUTCOME, "refused");
        span.setAttribute(HandoffTracing.REFUSAL_CODE, errorCode);
        span.setAttribute(HandoffTracing.REFUSAL_REASON, reason);
    }

    /** How an accepted request ended: complete, failed, cancelled, released, session-lost. */
    public void ended(String outcome) {
        span.setAttribute(HandoffTracing.OUTCOME, outcome);
    }

    /** The id of the request's trace, for the log; "none" when the request is not traced. */
    public String traceId() {
        return span.getSpanContext().isValid() ? span.getSpanContext().getTraceId() : "none";
    }

    /** The W3C traceparent of the request's span, kept on its session; "" when the request is not traced. */
    public String traceParent() {
        return HandoffTracing.traceParentOf(context);
    }

    /**
     * The session reached the state it is in now: an event named {@code session.<state>} with the session's id,
     * epoch, style, disposition, route, the route's engine family and the endpoints of both legs.
     */
    public void session(Session session, Endpoint prefill, Endpoint decode) {
        session(session, session.state(), session.epoch(), prefill, decode);
    }

    /**
     * The session passed through {@code state} at {@code epoch} on its way to the state it is in now (a move of two
     * steps in one write): the event of that step, as if it had been written alone.
     */
    public void session(Session session, SessionState state, long epoch, Endpoint prefill, Endpoint decode) {
        Span span = sessionSpan;
        span.setAttribute(HandoffTracing.SESSION_ID, session.id());
        AttributesBuilder b = HandoffTracing.sessionAttributes(session).put(HandoffTracing.FAMILY, family)
                .put(HandoffTracing.SESSION_STATE, state.name()).put(HandoffTracing.SESSION_EPOCH, epoch);
        if (prefill != null) {
            b.put(HandoffTracing.PREFILL_ENDPOINT, prefill.name());
        }
        if (decode != null) {
            b.put(HandoffTracing.DECODE_ENDPOINT, decode.name());
        }
        span.addEvent(HandoffTracing.eventName(state), b.build());
    }

    /**
     * Runs the session's end, which is written after the Generate call ended, as a span of its own under the Generate
     * span ({@code handoff.session.end}): the session's last event goes there, as the ended Generate span can take
     * no more.
     */
    public <T> Uni<T> afterTheCall(Supplier<Uni<T>> end) {
        if (!span.getSpanContext().isValid()) {
            return Uni.createFrom().deferred(end::get);
        }
        return Uni.createFrom().deferred(() -> {
            Span endSpan = tracing.startSessionEnd(context, Attributes.of(HandoffTracing.ROUTE, route,
                    HandoffTracing.FAMILY, family));
            sessionSpan = endSpan;
            return end.get().onTermination().invoke((item, failure, cancelled) -> end(endSpan, failure, cancelled));
        });
    }

    /**
     * Runs a leg that answers once as a CLIENT span: {@code call} gets the headers to forward to the engine and is
     * subscribed within the span, which ends with the leg (in error if it fails).
     */
    public <T> Uni<T> leg(TracedLeg leg, Endpoint endpoint, Function<Map<String, String>, Uni<T>> call) {
        return Uni.createFrom().deferred(() -> {
            Span legSpan = start(leg, endpoint, 1);
            return Uni.createFrom().deferred(() -> call.apply(tracing.forwardOf(context, legSpan)))
                    .onTermination().invoke((item, failure, cancelled) -> end(legSpan, failure, cancelled));
        });
    }

    /**
     * Runs a streaming leg as a CLIENT span, like {@link #leg}; an EngineError event in the stream marks the span
     * as failed too, since the engine reported the failure as an event rather than failing the stream.
     */
    public Multi<GenerateResponse> stream(TracedLeg leg, Endpoint endpoint, int attempt,
            Function<Map<String, String>, Multi<GenerateResponse>> call) {
        return Multi.createFrom().deferred(() -> {
            Span legSpan = start(leg, endpoint, attempt);
            return Multi.createFrom().deferred(() -> call.apply(tracing.forwardOf(context, legSpan)))
                    .onItem().invoke(event -> {
                        if (event.hasError()) {
                            legSpan.setAttribute(HandoffTracing.ERROR_TYPE, event.getError().getCode().name());
                            legSpan.setStatus(StatusCode.ERROR, event.getError().getMessage());
                        }
                    })
                    .onTermination().invoke((failure, cancelled) -> end(legSpan, failure, cancelled));
        });
    }

    private Span start(TracedLeg leg, Endpoint endpoint, int attempt) {
        AttributesBuilder b = Attributes.builder()
                .put(HandoffTracing.ROUTE, route)
                .put(HandoffTracing.FAMILY, family)
                .put(HandoffTracing.ENDPOINT_NAME, endpoint.name())
                .put(HandoffTracing.ENDPOINT_URI, endpoint.uri().toString())
                .put(HandoffTracing.LEG_ATTEMPT, (long) attempt);
        URI uri = endpoint.uri();
        if (uri.getHost() != null) {
            b.put(HandoffTracing.SERVER_ADDRESS, uri.getHost());
        }
        if (uri.getPort() > 0) {
            b.put(HandoffTracing.SERVER_PORT, (long) uri.getPort());
        }
        return tracing.startLeg(context, leg, b.build());
    }

    private static void end(Span child, Throwable failure, boolean cancelled) {
        if (failure != null) {
            child.setAttribute(HandoffTracing.ERROR_TYPE, failure instanceof EngineException e ? e.code().name()
                    : failure.getClass().getName());
            HandoffTracing.failed(child, failure);
        } else if (cancelled) {
            // a cancelled leg is the gateway's own decision (client cancel, abort, the other leg failed)
            child.setAttribute(HandoffTracing.OUTCOME, "cancelled");
        }
        child.end();
    }
}
