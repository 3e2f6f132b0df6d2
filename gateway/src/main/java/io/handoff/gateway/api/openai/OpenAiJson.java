package io.handoff.gateway.api.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.handoff.gateway.api.rest.StrictUtf8;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The OpenAI front's JSON codec. Floats are read as {@link java.math.BigDecimal} and large integers as
 * {@link java.math.BigInteger}, so that what a client sent reaches the engines with the same value (a seed above
 * 2^53, a logit bias) instead of passing through a double. A body is read strictly: a field named twice, or
 * anything after the object, is refused, because its meaning would depend on which parser reads it.
 */
final class OpenAiJson {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private OpenAiJson() {
    }

    static ObjectMapper mapper() {
        return MAPPER;
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Parses JSON text, as {@link #parse(byte[])} does its UTF-8. */
    static JsonNode parse(String text) {
        return parse(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Parses a request body from its bytes, so that bytes that are not UTF-8 are refused rather than decoded into
     * replacement characters; a malformed body is an {@link IllegalArgumentException} saying why.
     */
    static JsonNode parse(byte[] body) {
        if (!StrictUtf8.isUtf8(body)) {
            throw new IllegalArgumentException("the body is not valid UTF-8");
        }
        try {
            return MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("unreadable body", e);
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
