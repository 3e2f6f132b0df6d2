package io.handoff.connector.openai.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The one JSON codec of the OpenAI-compatible connectors. Floats are read as {@link java.math.BigDecimal} and large
 * integers as {@link java.math.BigInteger} so that what an engine sent can be given back to another engine with the
 * same value (a block id above 2^53 or a deadline float must not pass through a double).
 */
public final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private Json() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Parses JSON text; malformed text is an {@link IllegalArgumentException} naming what was expected. */
    public static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + abbreviate(text), e);
        }
    }

    /** Parses UTF-8 JSON bytes, as {@link #parse(String)} does text. */
    public static JsonNode parse(byte[] utf8) {
        try {
            return MAPPER.readTree(utf8);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + abbreviate(new String(utf8, StandardCharsets.UTF_8)), e);
        }
    }

    /** UTF-8 bytes straight from the tree, for a request body: no String on the way to the socket. */
    public static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /**
     * Whether two JSON values are the same, comparing numbers by value ({@code 5}, {@code 5.0} and a big integer 5
     * are equal): what an engine sees is the value, not how a codec typed it.
     */
    public static boolean equivalent(JsonNode a, JsonNode b) {
        return a.equals((x, y) -> {
            if (x.isNumber() && y.isNumber()) {
                return x.decimalValue().compareTo(y.decimalValue());
            }
            return x.equals(y) ? 0 : 1;
        }, b);
    }

    /** Shortens engine text for error messages, so a huge error page does not flood logs. */
    public static String abbreviate(String text) {
        if (text == null) {
            return "";
        }
        return text.length() <= 300 ? text : text.substring(0, 300) + "...";
    }
}
