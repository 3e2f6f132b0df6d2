package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.ChatRequests;
import io.handoff.connector.openai.completion.CompletionBodyBuilder;
import io.handoff.openengine.v1.GenerateRequest;

import java.math.BigInteger;

/**
 * trtllm-serve's {@code /v1/completions} (a chat: {@code /v1/chat/completions}) bodies for the four leg shapes. The
 * shared builder writes the client's fields; this class adds {@code stream} and {@code disaggregated_params}, which
 * only the connector ever writes, and the context's prompt tokens on a context-first generation.
 */
final class TrtllmBodies extends CompletionBodyBuilder {

    static final int CONTEXT_FIRST = 0;
    static final int GENERATION_FIRST = 1;

    private final String routeModel;

    TrtllmBodies(String routeModel) {
        this.routeModel = routeModel;
    }

    /** A context leg: the client's request, not streamed, with {@code context_only} and the minted id. */
    ObjectNode context(GenerateRequest request, long disaggRequestId, int scheduleStyle) {
        ObjectNode body = build(request, routeModel);
        body.put("stream", false);
        ObjectNode dp = body.putObject("disaggregated_params");
        dp.put("request_type", "context_only");
        dp.put("disagg_request_id", BigInteger.valueOf(disaggRequestId));
        dp.put("schedule_style", scheduleStyle);
        return body;
    }

    /**
     * A context-first generation: the client's request, streamed, with the context's prompt token ids as the prompt
     * (a chat keeps its messages and gets them as {@code prompt_token_ids}, which the worker uses instead of
     * applying its template again, as trtllm-serve's own orchestrator sends it) and its disaggregated_params
     * verbatim except request_type, schedule_style, ctx_usage and disagg_request_id.
     */
    ObjectNode contextFirstGeneration(GenerateRequest request, TransferData ctx) {
        ObjectNode body = streamed(request);
        body.set(ChatRequests.isChat(request) ? "prompt_token_ids" : "prompt", ctx.promptTokenIds().deepCopy());
        ObjectNode dp = ((ObjectNode) ctx.params()).deepCopy();
        dp.put("request_type", "generation_only");
        dp.put("schedule_style", CONTEXT_FIRST);
        if (ctx.usage() != null) {
            dp.set("ctx_usage", ctx.usage().deepCopy());
        }
        dp.put("disagg_request_id", new BigInteger(ctx.disaggRequestId()));
        body.set("disaggregated_params", dp);
        return body;
    }

    /** A generation-first generation: sent before its context, naming the context worker's transceiver. */
    ObjectNode generationFirstGeneration(GenerateRequest request, long disaggRequestId, ServerInfo ctx) {
        ObjectNode body = streamed(request);
        ObjectNode dp = body.putObject("disaggregated_params");
        dp.put("request_type", "generation_only");
        dp.put("ctx_request_id", BigInteger.valueOf(disaggRequestId));
        dp.put("disagg_request_id", BigInteger.valueOf(disaggRequestId));
        dp.put("schedule_style", GENERATION_FIRST);
        dp.put("ctx_dp_rank", ctx.dpRank());
        dp.put("ctx_info_endpoint", ctx.infoEndpoint());
        return body;
    }

    /** A generation that prefills locally (bypass): an ordinary aggregated request, no disaggregated_params. */
    ObjectNode local(GenerateRequest request) {
        return streamed(request);
    }

    private ObjectNode streamed(GenerateRequest request) {
        ObjectNode body = build(request, routeModel);
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        return body;
    }

    static JsonNode params(JsonNode body) {
        return body.path("disaggregated_params");
    }
}
