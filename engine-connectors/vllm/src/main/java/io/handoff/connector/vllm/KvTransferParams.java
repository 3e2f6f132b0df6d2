package io.handoff.connector.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.openai.family.TransferInstants;
import io.handoff.connector.openai.http.Json;
import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The producer's {@code kv_transfer_params}, as the decode leg must receive them: verbatim, except that a loopback
 * {@code remote_host} (vLLM's {@code VLLM_NIXL_SIDE_CHANNEL_HOST} defaults to "localhost") becomes the host the
 * connector reached the producer at, so a consumer on another machine can find it.
 *
 * <p>In {@link io.handoff.connector.spi.Handoff#transferData()} the parameters travel as their JSON text under one
 * key: a protobuf Struct holds numbers as doubles, and block ids or any integer above 2^53 must reach the consumer
 * exactly as the producer wrote them. A few identities are copied beside it as plain strings for operators.
 */
final class KvTransferParams {

    static final String PARAMS_JSON = "kv_transfer_params_json";
    static final String REMOTE_REQUEST_ID = "remote_request_id";
    static final String REMOTE_ENGINE_ID = "remote_engine_id";
    static final String DECODE_DEADLINE = "decode_deadline";
    static final String HELD_UNTIL = "held_until";

    /** The keys a consumer needs; without any of them vLLM silently prefills locally instead of pulling. */
    static final List<String> REQUIRED = List.of("remote_block_ids", "remote_engine_id", "remote_request_id",
            "remote_host", "remote_port");

    private final ObjectNode params;

    private KvTransferParams(ObjectNode params) {
        this.params = params;
    }

    /**
     * Takes the producer's parameters from its answer.
     *
     * @throws EngineException KV_TRANSFER_FAILED if a key the consumer needs is missing
     */
    static KvTransferParams fromProducer(JsonNode node, Endpoint producer) {
        if (!node.isObject()) {
            throw failed("kv_transfer_params is not an object: " + Json.abbreviate(Json.write(node)));
        }
        ObjectNode params = ((ObjectNode) node).deepCopy();
        List<String> missing = REQUIRED.stream().filter(k -> params.path(k).isMissingNode() || params.get(k).isNull())
                .toList();
        if (!missing.isEmpty()) {
            throw failed("the producer's kv_transfer_params lack " + missing + " (a vLLM consumer would silently"
                    + " prefill locally); is it a NixlConnector build with remote_request_id (NIXL v2+)?");
        }
        if (isLoopback(params.get("remote_host").asText())) {
            params.put("remote_host", host(producer));
        }
        return new KvTransferParams(params);
    }

    String remoteRequestId() {
        return params.get("remote_request_id").asText();
    }

    String remoteEngineId() {
        return params.get("remote_engine_id").asText();
    }

    ObjectNode json() {
        return params.deepCopy();
    }

    Struct toStruct(Instant decodeDeadline, Instant heldUntil) {
        return Struct.newBuilder()
                .putFields(PARAMS_JSON, string(Json.write(params)))
                .putFields(REMOTE_REQUEST_ID, string(remoteRequestId()))
                .putFields(REMOTE_ENGINE_ID, string(remoteEngineId()))
                .putFields(DECODE_DEADLINE, string(TransferInstants.write(decodeDeadline)))
                .putFields(HELD_UNTIL, string(TransferInstants.write(heldUntil)))
                .build();
    }

    /**
     * The parameters a decode leg sends, from a handoff's transfer data; anything but a JSON object there (a
     * participant hands the transfer data back) is refused before the consumer is called, which would refuse it or,
     * given JSON null, take it for no parameters and prefill locally.
     */
    static JsonNode forDecode(Struct transferData) {
        Value json = transferData.getFieldsMap().get(PARAMS_JSON);
        if (json == null || !json.hasStringValue()) {
            throw EngineException.invalid("the handoff carries no vLLM kv_transfer_params: a vLLM decode leg follows"
                    + " a vLLM prefill (context-first)");
        }
        JsonNode params;
        try {
            params = Json.parse(json.getStringValue());
        } catch (IllegalArgumentException e) {
            throw EngineException.invalid("the handoff's vLLM kv_transfer_params are not JSON", e);
        }
        if (!params.isObject()) {
            throw EngineException.invalid("the handoff's vLLM kv_transfer_params are not a JSON object");
        }
        return params;
    }

    /** The last instant a decode may be sent at, or null if the transfer data does not say. */
    static Instant decodeDeadline(Struct transferData) {
        Value v = transferData.getFieldsMap().get(DECODE_DEADLINE);
        return v == null || !v.hasStringValue() ? null : TransferInstants.read(v.getStringValue());
    }

    static boolean isLoopback(String host) {
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return h.equals("localhost") || h.startsWith("127.") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1");
    }

    private static String host(Endpoint endpoint) {
        String h = endpoint.uri().getHost();
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }

    private static EngineException failed(String message) {
        return EngineException.sentFinal(ErrorCode.ERROR_CODE_KV_TRANSFER_FAILED, message);
    }
}
