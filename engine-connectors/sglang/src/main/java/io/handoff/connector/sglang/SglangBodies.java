package io.handoff.connector.sglang;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.connector.openai.completion.CompletionBodyBuilder;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GuidedDecoding;
import io.handoff.openengine.v1.StoppingOptions;

import java.util.Locale;

/**
 * SGLang's {@code /v1/completions} (a chat: {@code /v1/chat/completions}) bodies for the two legs. Both carry the
 * client's request unchanged plus the same {@code bootstrap_host}, {@code bootstrap_port} and
 * {@code bootstrap_room}, and each leg its own {@code rid}. SGLang
 * spells a few fields its own way: {@code no_stop_trim} keeps the stop string, guided decoding is a top-level
 * {@code json_schema} / {@code regex} / {@code ebnf}, a LoRA adapter is {@code lora_path}.
 */
final class SglangBodies extends CompletionBodyBuilder {

    private final String routeModel;

    SglangBodies(String routeModel) {
        this.routeModel = routeModel;
    }

    /**
     * The prefill leg: the same request, not streamed (its only output is the first token, which SGLang also hands
     * to the decode; the answer comes once the KV was written to the decode).
     */
    ObjectNode prefill(GenerateRequest request, SglangIds ids) {
        ObjectNode body = withBootstrap(build(request, routeModel), ids, ids.prefillRid());
        body.put("stream", false);
        return body;
    }

    /** The decode leg: the same request, streamed with usage, with the same bootstrap fields. */
    ObjectNode decode(GenerateRequest request, SglangIds ids) {
        ObjectNode body = withBootstrap(build(request, routeModel), ids, ids.decodeRid());
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        return body;
    }

    private static ObjectNode withBootstrap(ObjectNode body, SglangIds ids, String rid) {
        body.put("rid", rid);
        body.put("bootstrap_host", ids.bootstrapHost());
        body.put("bootstrap_port", ids.bootstrapPort());
        body.put("bootstrap_room", ids.room());
        return body;
    }

    @Override
    protected void stopping(StoppingOptions s, ObjectNode body) {
        super.stopping(s, body);
        if (body.has("include_stop_str_in_output")) {
            body.set("no_stop_trim", body.remove("include_stop_str_in_output"));
        }
    }

    @Override
    protected void guided(GuidedDecoding guided, ObjectNode body) {
        switch (guided.getGuideCase()) {
            // SGLang takes the schema as a JSON string; it is checked to be JSON in SglangFields
            case JSON_SCHEMA -> body.put("json_schema", guided.getJsonSchema());
            case REGEX -> body.put("regex", guided.getRegex());
            case EBNF_GRAMMAR -> body.put("ebnf", guided.getEbnfGrammar());
            default -> throw EngineException.unsupported("guided."
                    + guided.getGuideCase().name().toLowerCase(Locale.ROOT)
                    + " is not carried by sglang's /v1/completions");
        }
    }

    @Override
    protected void lora(String loraName, ObjectNode body) {
        body.put("lora_path", loraName);
    }

    static String write(ObjectNode body) {
        return Json.write(body);
    }
}
