package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The OpenAI front's JSON codec. Floats are read as {@link java.math.BigDecimal} and large integers as
 * {@link java.math.BigInteger}, so that what a client sent reaches the engines with the same value (a seed above
 * 2^53, a logit bias) instead of passing through a double.
 */
final class OpenAiJson {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private OpenAiJson() {
    }

    static ObjectMapper mapper() {
        return MAPPER;
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Parses a request body; malformed text is an {@link IllegalArgumentException} saying why. */
    static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e.getOriginalMessage(), e);
        }
    }

    /** UTF-8 straight from the tree: the event stream's frames are bytes, and no String is made on the way. */
    static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }
}
