package io.handoff.connector.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.openai.family.TransferInstants;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.EngineException;

import java.time.Instant;

/**
 * What a context-first context answer hands to the generation leg, inside
 * {@link io.handoff.connector.spi.Handoff#transferData()}: the context's {@code disaggregated_params}, its
 * {@code prompt_token_ids} and {@code usage}, each as JSON text (a protobuf Struct holds numbers as doubles, and the
 * request ids are above 2^53), plus a few plain strings for operators and the decode guard.
 */
record TransferData(JsonNode params, JsonNode promptTokenIds, JsonNode usage, String disaggRequestId,
        Instant decodeDeadline, Instant heldUntil) {

    static final String PARAMS_JSON = "disaggregated_params_json";
    static final String PROMPT_TOKEN_IDS_JSON = "prompt_token_ids_json";
    static final String USAGE_JSON = "ctx_usage_json";
    static final String DISAGG_REQUEST_ID = "disagg_request_id";
    static final String DECODE_DEADLINE = "decode_deadline";
    static final String HELD_UNTIL = "held_until";

    Struct toStruct() {
        Struct.Builder b = Struct.newBuilder()
                .putFields(PARAMS_JSON, string(Json.write(params)))
                .putFields(DISAGG_REQUEST_ID, string(disaggRequestId));
        if (promptTokenIds != null) {
            b.putFields(PROMPT_TOKEN_IDS_JSON, string(Json.write(promptTokenIds)));
        }
        if (usage != null) {
            b.putFields(USAGE_JSON, string(Json.write(usage)));
        }
        if (decodeDeadline != null) {
            b.putFields(DECODE_DEADLINE, string(TransferInstants.write(decodeDeadline)));
        }
        if (heldUntil != null) {
            b.putFields(HELD_UNTIL, string(TransferInstants.write(heldUntil)));
        }
        return b.build();
    }

    /** The transfer data a context-first generation needs; refuses a handoff that carries none. */
    static TransferData forGeneration(Struct data) {
        String params = text(data, PARAMS_JSON);
        String ids = text(data, PROMPT_TOKEN_IDS_JSON);
        if (params == null || ids == null) {
            throw EngineException.invalid("the handoff carries no TensorRT-LLM context answer: a context-first"
                    + " generation follows a trtllm context leg");
        }
        String usage = text(data, USAGE_JSON);
        String deadline = text(data, DECODE_DEADLINE);
        String held = text(data, HELD_UNTIL);
        return new TransferData(Json.parse(params), Json.parse(ids), usage == null ? null : Json.parse(usage),
                text(data, DISAGG_REQUEST_ID), deadline == null ? null : TransferInstants.read(deadline),
                held == null ? null : TransferInstants.read(held));
    }

    private static String text(Struct data, String key) {
        Value v = data.getFieldsMap().get(key);
        return v == null || !v.hasStringValue() ? null : v.getStringValue();
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }
}
