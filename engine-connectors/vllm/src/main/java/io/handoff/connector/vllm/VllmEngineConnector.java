package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
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

import java.time.Instant;
import java.util.List;
import java.util.HashMap;
import java.util.Map;

/**
 * The vLLM connector of one route. Both legs go to {@code /v1/completions} (a chat: {@code /v1/chat/completions})
 * with the same {@code X-Request-Id} (vLLM mints its own internal ids from it; nothing is minted here). See the
 * package documentation and {@code mappings/vllm.md}.
 *
 * <p>vLLM has no public abort endpoint and cannot free parked KV early: the producer keeps it until a consumer reads
 * it or its timer ends.
 */
final class VllmEngineConnector extends OpenAiHttpConnector implements NoCleanupApi {

    static final String REQUEST_ID_HEADER = "X-Request-Id";

    private final VllmSettings settings;
    private final VllmBodies bodies;
    private final VllmProbe probe;

    VllmEngineConnector(ConnectorConfig config, VllmSettings settings, ConnectorContext context) {
        super(VllmConnectorService.FAMILY, config, VllmCapabilities.of(settings), context, settings.client());
        this.settings = settings;
        this.bodies = new VllmBodies(config.model());
        this.probe = new VllmProbe(http, settings.probeTimeout(), config.model());
    }

    @Override
    public Handoff plan(String requestId, ScheduleStyle style, GenerateRequest request, Endpoint prefill,
            Endpoint decode) {
        requireEndpoints(prefill, decode);
        if (style != ScheduleStyle.CONTEXT_FIRST) {
            throw EngineException.unsupported("vllm (NixlConnector pull) supports context-first only, not "
                    + style.configName() + ": the decode needs the producer's kv_transfer_params");
        }
        VllmFields.check(request, true);
        bodies.prefill(request); // surfaces any remaining refusal of the body builder now, before anything is sent
        return new Handoff(requestId, style, request, prefill, decode, Map.of("x_request_id", requestId), null);
    }

    @Override
    public List<HeldKv> heldAfterCancelledPrefill(Handoff handoff) {
        return List.of(PrefillAnswer.unseen(handoff, settings, clock.instant()));
    }

    @Override
    public Uni<PrefillResult> prefill(Handoff handoff) {
        return Uni.createFrom().deferred(() -> {
            JsonNode body = bodies.prefill(handoff.request());
            Instant sentAt = clock.instant();
            String path = ChatRequests.path(handoff.request());
            return prefillHttp.postJson(handoff.prefill(), path, headers(handoff.requestId(), handoff.forward()), body)
                    .map(answer -> PrefillAnswer.read(answer, handoff, settings, sentAt, clock.instant()));
        });
    }

    @Override
    public Multi<GenerateResponse> decode(Handoff handoff) {
        return Multi.createFrom().deferred(() -> {
            JsonNode params = KvTransferParams.forDecode(handoff.transferData());
            Instant deadline = KvTransferParams.decodeDeadline(handoff.transferData());
            if (deadline != null && clock.instant().isAfter(deadline)) {
                // the producer may have freed the blocks; vLLM would decode from them anyway and answer 200
                throw EngineException.refused(ErrorCode.ERROR_CODE_KV_SESSION_NOT_FOUND,
                        "the producer's hold on " + handoff.prefill().name() + " may have ended (decode deadline "
                                + deadline + "); not sending a decode that could read freed KV");
            }
            JsonNode body = bodies.decode(handoff.request(), params);
            return CompletionStreams.events(
                    http.postSse(handoff.decode(), ChatRequests.path(handoff.request()),
                            headers(handoff.requestId(), handoff.forward()), body, CompletionChunk.EVENTS),
                    handoff.requestId())
                    .onFailure(EngineException.class).transform(VllmEngineConnector::afterParamsSent);
        });
    }

    /**
     * Once a consumer received the parameters it may have read the blocks or told the producer to free them (an
     * abort or a rejection notifies the producer), so the same parameters must never be sent again: nothing that
     * reached the consumer is retryable.
     */
    private static Throwable afterParamsSent(Throwable failure) {
        EngineException e = (EngineException) failure;
        if (!e.sentToEngine() || !e.retryable()) {
            return e;
        }
        return EngineException.sentFinal(e.code(), e.getMessage()
                + " (not retryable: the consumer had the producer's kv_transfer_params)", e);
    }

    @Override
    public Multi<GenerateResponse> decodeLocally(String requestId, GenerateRequest request, Endpoint decode,
            Map<String, String> forward) {
        return Multi.createFrom().deferred(() -> {
            VllmFields.check(request, false);
            JsonNode body = bodies.local(request);
            return CompletionStreams.events(http.postSse(decode, ChatRequests.path(request),
                    headers(requestId, forward), body, CompletionChunk.EVENTS), requestId);
        });
    }

    @Override
    public Uni<EndpointStatus> probe(Endpoint endpoint) {
        return probe.probe(endpoint);
    }

    /** The gateway's forwarded headers (trace context) and the request id both legs share. */
    private static Map<String, String> headers(String requestId, Map<String, String> forward) {
        Map<String, String> headers = new HashMap<>(forward);
        headers.put(REQUEST_ID_HEADER, requestId);
        return headers;
    }
}
