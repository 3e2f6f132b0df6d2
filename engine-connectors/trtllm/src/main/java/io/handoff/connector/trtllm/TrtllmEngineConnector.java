package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.CompletionChunk;
import io.handoff.connector.openai.completion.CompletionStreams;
import io.handoff.connector.openai.family.NoCleanupApi;
import io.handoff.connector.openai.family.OpenAiHttpConnector;
import io.handoff.connector.spi.ConnectorConfig;
import io.handoff.connector.spi.ConnectorContext;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.HeldKv;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The TensorRT-LLM connector of one route. Every leg is a {@code POST /v1/completions} (a chat:
 * {@code /v1/chat/completions}) on a trtllm-serve worker; the handoff travels in {@code disaggregated_params}. See
 * the package documentation and {@code mappings/trtllm.md}.
 *
 * <p>trtllm-serve has no abort endpoint and cannot free a parked context early: it holds it until pulled or
 * {@code kv_transfer_timeout_ms} ends.
 */
final class TrtllmEngineConnector extends OpenAiHttpConnector implements NoCleanupApi {

    static final String DISAGG_REQUEST_ID = "disagg_request_id";

    private final TrtllmSettings settings;
    private final TrtllmBodies bodies;
    private final TrtllmProbe probe;
    private final DisaggIds ids;

    TrtllmEngineConnector(ConnectorConfig config, TrtllmSettings settings, ConnectorContext context) {
        super(TrtllmConnectorService.FAMILY, config, TrtllmCapabilities.of(settings), context, settings.client());
        this.settings = settings;
        this.bodies = new TrtllmBodies(config.model());
        this.probe = new TrtllmProbe(http, settings.probeTimeout());
        this.ids = new DisaggIds(settings.nodeId());
    }

    @Override
    public Handoff plan(String requestId, ScheduleStyle style, GenerateRequest request, Endpoint prefill,
            Endpoint decode) {
        requireEndpoints(prefill, decode);
        if (style == ScheduleStyle.CONCURRENT) {
            throw EngineException.unsupported("trtllm-serve has no concurrent style (context-first and"
                    + " generation-first only)");
        }
        if (!settings.styles().contains(style)) {
            throw EngineException.unsupported("route " + config.route() + " does not enable " + style.configName()
                    + " for trtllm (schedule-styles)");
        }
        TrtllmFields.check(request, true);
        bodies.context(request, DisaggIds.MIN_GLOBAL_ID, 0); // surfaces any refusal of the body builder now
        String id = Long.toString(ids.next());
        return new Handoff(requestId, style, request, prefill, decode, Map.of(DISAGG_REQUEST_ID, id), null);
    }

    @Override
    public List<HeldKv> heldAfterCancelledPrefill(Handoff handoff) {
        // a generation-first context pushes to a generation that is already waiting: nothing stays parked
        return handoff.style() == ScheduleStyle.CONTEXT_FIRST
                ? List.of(ContextAnswer.held(handoff, clock.instant().plus(settings.hold()))) : List.of();
    }

    @Override
    public Uni<PrefillResult> prefill(Handoff handoff) {
        return Uni.createFrom().deferred(() -> {
            long id = disaggRequestId(handoff);
            int style = handoff.style() == ScheduleStyle.GENERATION_FIRST ? TrtllmBodies.GENERATION_FIRST
                    : TrtllmBodies.CONTEXT_FIRST;
            ObjectNode body = bodies.context(handoff.request(), id, style);
            Instant sentAt = clock.instant();
            return prefillHttp.postJson(handoff.prefill(), ChatRequests.path(handoff.request()),
                    headers(body, handoff.forward()), body)
                    .map(answer -> ContextAnswer.read(answer, handoff, settings, sentAt, clock.instant()))
                    .onFailure(EngineException.class).transform(f -> afterContextFailure(handoff,
                            (EngineException) f));
        });
    }

    /**
     * A context leg that failed after it reached the worker may have parked KV (the answer was lost, or the worker
     * prefilled before it saw the closed connection); until the timer ends that is reported as held. An answer that
     * refused the request (4xx, 503) parked nothing.
     */
    private Throwable afterContextFailure(Handoff handoff, EngineException e) {
        if (handoff.style() == ScheduleStyle.GENERATION_FIRST) {
            probe.forget(handoff.prefill()); // a restarted worker advertises a new transceiver
        }
        if (!e.sentToEngine() || !e.held().isEmpty() || e.code() == ErrorCode.ERROR_CODE_INVALID_ARGUMENT
                || e.code() == ErrorCode.ERROR_CODE_MODEL_NOT_FOUND || e.code() == ErrorCode.ERROR_CODE_OVERLOADED) {
            return e;
        }
        return e.withHeld(List.of(ContextAnswer.held(handoff, clock.instant().plus(settings.hold()))));
    }

    @Override
    public Multi<GenerateResponse> decode(Handoff handoff) {
        return switch (handoff.style()) {
            case CONTEXT_FIRST -> contextFirstGeneration(handoff);
            case GENERATION_FIRST -> generationFirstGeneration(handoff);
            default -> Multi.createFrom().failure(EngineException.unsupported("trtllm-serve has no "
                    + handoff.style().configName() + " style"));
        };
    }

    private Multi<GenerateResponse> contextFirstGeneration(Handoff handoff) {
        return Multi.createFrom().deferred(() -> {
            TransferData ctx = TransferData.forGeneration(handoff.transferData());
            if (ctx.decodeDeadline() != null && clock.instant().isAfter(ctx.decodeDeadline())) {
                // the context's kv_transfer_timeout_ms may have ended: the generation would wait for KV that is gone
                throw EngineException.refused(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND,
                        "the context's hold on " + handoff.prefill().name() + " may have ended (decode deadline "
                                + ctx.decodeDeadline() + "); not sending a generation that would wait for freed KV");
            }
            ObjectNode body = bodies.contextFirstGeneration(handoff.request(), ctx);
            return stream(handoff.decode(), ChatRequests.path(handoff.request()), body, handoff.requestId(),
                    handoff.forward())
                    .onFailure(EngineException.class).transform(TrtllmEngineConnector::afterParamsSent);
        });
    }

    /**
     * Sent as soon as it is subscribed (after one {@code /server_info} read of the context worker when its transceiver
     * endpoint is not cached), so that it is in flight before the context leg: the context waits for it.
     */
    private Multi<GenerateResponse> generationFirstGeneration(Handoff handoff) {
        return Multi.createFrom().deferred(() -> {
            long id = disaggRequestId(handoff);
            return probe.serverInfo(handoff.prefill())
                    .onFailure().transform(f -> EngineException.notSent(ErrorCode.ERROR_CODE_INTERNAL,
                            "generation-first needs the transceiver endpoint of " + handoff.prefill().name() + ": "
                                    + f.getMessage(), f))
                    .onItem().transformToMulti(info -> {
                        ObjectNode body = bodies.generationFirstGeneration(handoff.request(), id, info);
                        return stream(handoff.decode(), ChatRequests.path(handoff.request()), body,
                                handoff.requestId(), handoff.forward());
                    })
                    .onFailure(EngineException.class).transform(f -> {
                        if (((EngineException) f).sentToEngine()) {
                            probe.forget(handoff.prefill());
                        }
                        return afterParamsSent(f);
                    });
        });
    }

    /**
     * One streamed generation. Its stream errors are top-level {@code {"object":"error","message":...,"code":...}}
     * events (not {@code {"error":{...}}}), which {@link CompletionChunk#EVENTS} fails on. Two guards the shared
     * client does not give for trtllm-serve: a worker whose KV receive stalls keeps the stream open without a byte,
     * so silence after the headers is bounded by the route's idle timeout; and a stream that ends without finishing
     * its output (only [DONE]) is a failure, never an empty answer.
     */
    private Multi<GenerateResponse> stream(Endpoint endpoint, String path, ObjectNode body, String requestId,
            Map<String, String> forward) {
        String what = "POST " + path + " on " + endpoint.name();
        Duration idle = settings.client().idleTimeout();
        Multi<CompletionChunk> chunks = http.postSse(endpoint, path, headers(body, forward), body,
                        CompletionChunk.EVENTS)
                .ifNoItem().after(idle).failWith(() -> EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
                        what + ": timed out (no data for " + idle + ")"));
        AtomicBoolean finished = new AtomicBoolean();
        return CompletionStreams.events(chunks, requestId)
                .onItem().invoke(e -> {
                    if (e.hasFinished()) {
                        finished.set(true);
                    }
                })
                .onCompletion().switchTo(() -> finished.get() ? Multi.createFrom().empty()
                        : Multi.createFrom().failure(EngineException.sentFinal(ErrorCode.ERROR_CODE_INTERNAL,
                                what + ": the stream ended without finishing its output")));
    }

    /**
     * A generation that reached its worker holds the request id (a resend with the same id is a duplicate there) and
     * may have taken the context's KV: nothing that reached the worker is retryable.
     */
    private static Throwable afterParamsSent(Throwable failure) {
        EngineException e = (EngineException) failure;
        if (!e.sentToEngine() || !e.retryable()) {
            return e;
        }
        return EngineException.sentFinal(e.code(), e.getMessage()
                + " (not retryable: the generation worker had the handoff)", e).withHeld(e.held());
    }

    @Override
    public Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode,
            Map<String, String> forward) {
        return Multi.createFrom().deferred(() -> {
            TrtllmFields.check(request, false);
            return stream(decode, ChatRequests.path(request), bodies.local(request), requestId, forward);
        });
    }

    @Override
    public Uni<EndpointStatus> probe(Endpoint endpoint) {
        return probe.probe(endpoint);
    }

    /**
     * The gateway's forwarded headers (trace context), and the auth header when the route has the workers' key and
     * the body carries a protected field.
     */
    private Map<String, String> headers(JsonNode body, Map<String, String> forward) {
        JsonNode dp = TrtllmBodies.params(body);
        if (settings.authKey().isEmpty() || !dp.isObject() || !DisaggAuthHeader.needed(dp)) {
            return forward;
        }
        Map<String, String> headers = new HashMap<>(forward);
        headers.put(DisaggAuthHeader.NAME, DisaggAuthHeader.value(settings.authKey().get(), dp));
        return headers;
    }

    private static long disaggRequestId(Handoff handoff) {
        String id = handoff.nativeIds().get(DISAGG_REQUEST_ID);
        if (id == null) {
            throw EngineException.invalid("the handoff was not planned by the trtllm connector (no disagg_request_id)");
        }
        return Long.parseLong(id);
    }
}
