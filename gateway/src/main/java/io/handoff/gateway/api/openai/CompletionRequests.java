package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.openengine.v1.CandidateTokenSelection;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.ResponseOptions;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StopCondition;
import io.handoff.openengine.v1.StoppingOptions;
import io.handoff.openengine.v1.TokenIds;

import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A {@code /v1/completions} or {@code /v1/chat/completions} body as a Generate. The fields Generate has a place for
 * go there; every other field goes to {@code extra} verbatim, which the connector writes back into the engine's
 * body, so the engine receives what the client sent. The engines' native disaggregation fields are Handoff's to set
 * and are refused.
 *
 * <p>A chat is a Generate without a prompt whose {@code extra} holds the {@code messages} (with the other chat
 * fields beside them): the gateway has no tokenizer and no chat templates, so the connector sends it to the
 * engines' chat endpoint, where each engine applies its own template ({@code InputKind.CHAT_MESSAGES}).
 */
final class CompletionRequests {

    /** Fields a client must not send: the connectors set them for the handoff. */
    static final Set<String> NATIVE_HANDOFF_FIELDS = Set.of("kv_transfer_params", "bootstrap_host", "bootstrap_port",
            "bootstrap_room", "disaggregated_params", "disagg_request_id");

    /** Fields this front reads itself and never forwards. */
    private static final Set<String> FRONT_FIELDS = Set.of("model", "prompt", "stream", "stream_options",
            "max_tokens", "temperature", "top_p", "n", "seed", "stop", "presence_penalty", "frequency_penalty",
            "logprobs", "echo", "best_of", "suffix", "top_k", "min_p", "repetition_penalty", "min_tokens",
            "ignore_eos", "stop_token_ids", "include_stop_str_in_output");

    /**
     * Fields the chat front reads itself and never forwards; {@code messages} is not one of them: it is forwarded,
     * with every other chat field, in {@code extra}.
     */
    /** The largest value of a uint32 field; Java carries it in an int's bits. */
    private static final long UINT32_MAX = 0xFFFF_FFFFL;

    private static final Set<String> CHAT_FRONT_FIELDS = Set.of("model", "stream", "stream_options", "max_tokens",
            "max_completion_tokens", "temperature", "top_p", "n", "seed", "stop", "presence_penalty",
            "frequency_penalty", "logprobs", "top_logprobs", "top_k", "min_p", "repetition_penalty", "min_tokens",
            "ignore_eos", "stop_token_ids", "include_stop_str_in_output");

    private CompletionRequests() {
    }

    /** What the front needs besides the Generate: how to answer. */
    record Parsed(GenerateRequest request, String model, boolean stream, boolean includeUsage, int outputs,
            boolean logprobs) {
    }

    /** A {@code /v1/completions} body. */
    static Parsed parse(JsonNode body, String requestId) {
        return parse(body, requestId, false);
    }

    /** A {@code /v1/chat/completions} body. */
    static Parsed parseChat(JsonNode body, String requestId) {
        return parse(body, requestId, true);
    }

    private static Parsed parse(JsonNode body, String requestId, boolean chat) {
        if (body == null || !body.isObject()) {
            throw OpenAiFailure.invalid(null, "the body must be a JSON object");
        }
        for (String field : NATIVE_HANDOFF_FIELDS) {
            if (body.has(field)) {
                throw OpenAiFailure.invalid(field, field + " is an engine's native disaggregation field; Handoff "
                        + "sets it for the handoff and never forwards a client's");
            }
        }
        String model = text(body, "model", true);
        GenerateRequest.Builder g = GenerateRequest.newBuilder().setRequestId(requestId).setModel(model);
        if (chat) {
            messages(body.get("messages"));
        } else {
            prompt(body.get("prompt"), g);
            refuseUnless(body, "echo", v -> v.isBoolean() && !v.asBoolean(), "echo is not supported");
            refuseUnless(body, "suffix", JsonNode::isNull, "suffix is not supported");
        }
        SamplingParams.Builder sampling = SamplingParams.newBuilder();
        number(body, "temperature").ifPresent(sampling::setTemperature);
        number(body, "top_p").ifPresent(sampling::setTopP);
        number(body, "min_p").ifPresent(sampling::setMinP);
        number(body, "presence_penalty").ifPresent(sampling::setPresencePenalty);
        number(body, "frequency_penalty").ifPresent(sampling::setFrequencyPenalty);
        number(body, "repetition_penalty").ifPresent(sampling::setRepetitionPenalty);
        integer(body, "top_k", Integer.MIN_VALUE, Integer.MAX_VALUE).ifPresent(v -> sampling.setTopK((int) v));
        integer(body, "seed", Long.MIN_VALUE, Long.MAX_VALUE).ifPresent(sampling::setSeed);
        int outputs = (int) integer(body, "n", 1, Integer.MAX_VALUE).orElse(1);
        if (body.has("n")) {
            sampling.setNumSequences(outputs);
        }
        if (!chat && body.has("best_of") && !body.get("best_of").isNull()
                && (!body.get("best_of").canConvertToInt() || body.get("best_of").asInt() != outputs)) {
            throw OpenAiFailure.invalid("best_of", "best_of other than n is not supported");
        }
        if (!sampling.build().equals(SamplingParams.getDefaultInstance())) {
            g.setSampling(sampling);
        }
        StoppingOptions.Builder stopping = StoppingOptions.newBuilder();
        // chat: max_completion_tokens replaces the deprecated max_tokens (and wins when both are sent, as in the
        // engines); the engines read max_tokens on both endpoints
        OptionalLong maxTokens = chat ? integer(body, "max_completion_tokens", 1, UINT32_MAX)
                : OptionalLong.empty();
        (maxTokens.isPresent() ? maxTokens : integer(body, "max_tokens", 1, UINT32_MAX))
                .ifPresent(v -> stopping.setMaxTokens((int) v));
        integer(body, "min_tokens", 0, UINT32_MAX).ifPresent(v -> stopping.setMinTokens((int) v));
        bool(body, "ignore_eos").ifPresent(stopping::setIgnoreEos);
        bool(body, "include_stop_str_in_output").ifPresent(stopping::setIncludeStopInOutput);
        stops(body, stopping);
        if (!stopping.build().equals(StoppingOptions.getDefaultInstance())) {
            g.setStopping(stopping);
        }
        boolean logprobs = false;
        if (chat) {
            logprobs = bool(body, "logprobs").orElse(false);
            long top = integer(body, "top_logprobs", 0, UINT32_MAX).orElse(0L);
            if (body.hasNonNull("top_logprobs") && !logprobs) {
                throw OpenAiFailure.invalid("top_logprobs", "top_logprobs needs logprobs: true");
            }
            if (logprobs) {
                ResponseOptions.Builder response = ResponseOptions.newBuilder().setReturnOutputLogprobs(true);
                if (top > 0) {
                    response.setOutputCandidates(CandidateTokenSelection.newBuilder().setTopN((int) top));
                }
                g.setResponse(response);
            }
        } else if (body.has("logprobs") && !body.get("logprobs").isNull()) {
            long top = integer(body, "logprobs", 0, UINT32_MAX).orElse(0L);
            logprobs = true;
            ResponseOptions.Builder response = ResponseOptions.newBuilder().setReturnOutputLogprobs(true);
            if (top > 0) {
                response.setOutputCandidates(CandidateTokenSelection.newBuilder().setTopN((int) top));
            }
            g.setResponse(response);
        }
        Struct.Builder extra = Struct.newBuilder();
        for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (!(chat ? CHAT_FRONT_FIELDS : FRONT_FIELDS).contains(field.getKey())) {
                extra.putFields(field.getKey(), value(field.getValue()));
            }
        }
        if (extra.getFieldsCount() > 0) {
            g.setExtra(extra);
        }
        boolean stream = bool(body, "stream").orElse(false);
        JsonNode options = body.path("stream_options");
        if (!options.isMissingNode() && !options.isNull() && !stream) {
            throw OpenAiFailure.invalid("stream_options", "stream_options needs stream: true");
        }
        boolean includeUsage = options.path("include_usage").asBoolean(false);
        return new Parsed(g.build(), model, stream, includeUsage, outputs, logprobs);
    }

    /** The chat's messages: checked for shape only (the engine validates them), forwarded verbatim in extra. */
    private static void messages(JsonNode messages) {
        if (messages == null || messages.isNull()) {
            throw OpenAiFailure.invalid("messages", "messages is required");
        }
        if (!messages.isArray() || messages.isEmpty()) {
            throw OpenAiFailure.invalid("messages", "messages must be a non-empty array of messages");
        }
        for (JsonNode m : messages) {
            if (!m.isObject() || !m.path("role").isTextual()) {
                throw OpenAiFailure.invalid("messages", "each message must be an object with a string role");
            }
        }
    }

    private static void prompt(JsonNode prompt, GenerateRequest.Builder g) {
        if (prompt == null || prompt.isNull()) {
            throw OpenAiFailure.invalid("prompt", "prompt is required");
        }
        if (prompt.isTextual()) {
            g.setPrompt(prompt.asText());
            return;
        }
        if (prompt.isArray() && prompt.size() == 1 && (prompt.get(0).isTextual() || prompt.get(0).isArray())) {
            prompt(prompt.get(0), g);
            return;
        }
        if (prompt.isArray() && prompt.size() > 0 && prompt.get(0).isIntegralNumber()) {
            TokenIds.Builder ids = TokenIds.newBuilder();
            for (JsonNode id : prompt) {
                if (!id.canConvertToLong() || id.asLong() < 0 || id.asLong() > 0xFFFFFFFFL) {
                    throw OpenAiFailure.invalid("prompt", "token ids are non-negative 32-bit integers");
                }
                ids.addIds((int) id.asLong());
            }
            g.setTokenIds(ids);
            return;
        }
        if (prompt.isArray() && prompt.size() > 1) {
            throw OpenAiFailure.invalid("prompt", "a batch of prompts is not supported; send one request per prompt");
        }
        throw OpenAiFailure.invalid("prompt", "prompt must be a string or an array of token ids");
    }

    private static void stops(JsonNode body, StoppingOptions.Builder stopping) {
        JsonNode stop = body.get("stop");
        if (stop != null && !stop.isNull()) {
            if (stop.isTextual()) {
                stopping.addConditions(StopCondition.newBuilder().setStopText(stop.asText()));
            } else if (stop.isArray()) {
                for (JsonNode s : stop) {
                    if (!s.isTextual()) {
                        throw OpenAiFailure.invalid("stop", "stop must be a string or an array of strings");
                    }
                    stopping.addConditions(StopCondition.newBuilder().setStopText(s.asText()));
                }
            } else {
                throw OpenAiFailure.invalid("stop", "stop must be a string or an array of strings");
            }
        }
        JsonNode ids = body.get("stop_token_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) {
                throw OpenAiFailure.invalid("stop_token_ids", "stop_token_ids must be an array of integers");
            }
            for (JsonNode id : ids) {
                if (!id.canConvertToInt() || id.asInt() < 0) {
                    throw OpenAiFailure.invalid("stop_token_ids", "stop_token_ids must be non-negative integers");
                }
                stopping.addConditions(StopCondition.newBuilder().setStopTokenId(id.asInt()));
            }
        }
    }

    private static String text(JsonNode body, String field, boolean required) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw OpenAiFailure.invalid(field, field + " is required");
            }
            return "";
        }
        if (!v.isTextual()) {
            throw OpenAiFailure.invalid(field, field + " must be a string");
        }
        return v.asText();
    }

    private static Optional<Double> number(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isNumber() || !Double.isFinite(v.asDouble())) {
            throw OpenAiFailure.invalid(field, field + " must be a number"
                    + (v.isNumber() ? " a double can hold (at most about 1.8e308)" : ""));
        }
        return Optional.of(v.asDouble());
    }

    /**
     * An integer field within the range of the OpenEngine field it becomes (a uint32 count, an int32, a uint64 seed):
     * a value outside it is refused, never truncated into another value.
     */
    private static OptionalLong integer(JsonNode body, String field, long min, long max) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return OptionalLong.empty();
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            throw OpenAiFailure.invalid(field, field + " must be an integer"
                    + (min == Long.MIN_VALUE ? "" : max == Long.MAX_VALUE ? " of at least " + min
                            : " from " + min + " to " + max));
        }
        return OptionalLong.of(v.asLong());
    }

    private static Optional<Boolean> bool(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isBoolean()) {
            throw OpenAiFailure.invalid(field, field + " must be true or false");
        }
        return Optional.of(v.asBoolean());
    }

    private static void refuseUnless(JsonNode body, String field, Predicate<JsonNode> ok,
            String message) {
        JsonNode v = body.get(field);
        if (v != null && !v.isNull() && !ok.test(v)) {
            throw OpenAiFailure.invalid(field, message);
        }
    }

    /**
     * JSON to a protobuf Value, losslessly except that numbers become doubles (as everywhere in Struct); a number
     * no double holds is refused, since it would reach the engine as infinity, which JSON cannot write.
     */
    static Value value(JsonNode node) {
        if (node.isNull()) {
            return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
        }
        if (node.isBoolean()) {
            return Value.newBuilder().setBoolValue(node.asBoolean()).build();
        }
        if (node.isNumber()) {
            if (!Double.isFinite(node.asDouble())) {
                throw OpenAiFailure.invalid(null, "the number " + node.asText() + " is more than a double can hold");
            }
            return Value.newBuilder().setNumberValue(node.asDouble()).build();
        }
        if (node.isTextual()) {
            return Value.newBuilder().setStringValue(node.asText()).build();
        }
        if (node.isArray()) {
            ListValue.Builder list = ListValue.newBuilder();
            node.forEach(item -> list.addValues(value(item)));
            return Value.newBuilder().setListValue(list).build();
        }
        Struct.Builder struct = Struct.newBuilder();
        node.fields().forEachRemaining(f -> struct.putFields(f.getKey(), value(f.getValue())));
        return Value.newBuilder().setStructValue(struct).build();
    }
}
