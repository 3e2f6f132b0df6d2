package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.CompletionBodyBuilder;
import io.handoff.connector.openai.http.Json;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GuidedDecoding;

/**
 * vLLM's {@code /v1/completions} bodies for the three leg shapes. The shared builder writes the common fields; vLLM
 * adds {@code structured_outputs} for guided decoding, serves a LoRA adapter under its own model name, and returns
 * token ids when asked ({@code return_token_ids}).
 */
final class VllmBodies extends CompletionBodyBuilder {

    /**
     * The nulls are vLLM's convention (toy proxy, llm-d); only do_remote_decode is read by the producer. Parsed once:
     * every prefill leg sends its own copy.
     */
    private static final ObjectNode PREFILL_PARAMS = (ObjectNode) Json.parse("{\"do_remote_decode\":true,"
            + "\"do_remote_prefill\":false,\"remote_engine_id\":null,\"remote_block_ids\":null,\"remote_host\":null,"
            + "\"remote_port\":null}");

    private final String routeModel;

    VllmBodies(String routeModel) {
        this.routeModel = routeModel;
    }

    /**
     * The prefill leg: the client's request, made to stop after one token and park its KV. {@code stream_options}
     * goes (vLLM refuses it without streaming) and {@code min_tokens} is capped at 1 (vLLM refuses
     * {@code min_tokens > max_tokens}).
     */
    ObjectNode prefill(GenerateRequest request) {
        ObjectNode body = build(request, routeModel);
        body.put("max_tokens", 1);
        if (body.has("max_completion_tokens")) {
            body.put("max_completion_tokens", 1);
        }
        if (body.has("min_tokens")) {
            body.put("min_tokens", Math.min(1, body.get("min_tokens").asLong()));
        }
        body.put("stream", false);
        body.remove("stream_options");
        body.set("kv_transfer_params", PREFILL_PARAMS.deepCopy());
        return body;
    }

    /** The decode leg: the client's request, streamed, with the producer's parameters exactly as it sent them. */
    ObjectNode decode(GenerateRequest request, JsonNode producerParams) {
        ObjectNode body = local(request);
        body.set("kv_transfer_params", producerParams);
        return body;
    }

    /** A decode that prefills locally (bypass): the client's request, streamed, no transfer. */
    ObjectNode local(GenerateRequest request) {
        ObjectNode body = build(request, routeModel);
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        return body;
    }

    @Override
    public ObjectNode build(GenerateRequest request, String model) {
        ObjectNode body = super.build(request, model);
        // token ids in every answer, so TokenOutput carries ids and not only text
        body.put("return_token_ids", true);
        return body;
    }

    /** vLLM serves each LoRA adapter as a model of its own name. */
    @Override
    protected void lora(String loraName, ObjectNode body) {
        body.put("model", loraName);
    }

    /** vLLM's {@code structured_outputs} object (the older {@code guided_*} fields are gone from current builds). */
    @Override
    protected void guided(GuidedDecoding guided, ObjectNode body) {
        ObjectNode so = body.putObject("structured_outputs");
        switch (guided.getGuideCase()) {
            case JSON_SCHEMA -> so.set("json", Json.parse(guided.getJsonSchema()));
            case REGEX -> so.put("regex", guided.getRegex());
            case EBNF_GRAMMAR -> so.put("grammar", guided.getEbnfGrammar());
            case STRUCTURAL_TAG -> so.put("structural_tag", guided.getStructuralTag());
            case CHOICE -> {
                ArrayNode choices = so.putArray("choice");
                guided.getChoice().getChoicesList().forEach(choices::add);
            }
            case JSON_OBJECT -> so.put("json_object", true);
            default -> body.remove("structured_outputs");
        }
    }
}
