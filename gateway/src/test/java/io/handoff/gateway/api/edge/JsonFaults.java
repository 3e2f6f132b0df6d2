package io.handoff.gateway.api.edge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Bad JSON bodies made from a valid one. Every fault here makes the body invalid whatever else it holds, so a body
 * that is answered with anything but a refusal is a defect of the gateway, never luck of the draw: a prefix of an
 * object is never an object, a known field of the wrong type or outside its range is refused, and so on.
 */
final class JsonFaults {

    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String MARK = "@@MARK@@";

    /** Byte runs that are not UTF-8: a bad start byte, a lone continuation, an overlong form, a surrogate, cut short. */
    static final List<byte[]> NOT_UTF8 = List.of(new byte[] {(byte) 0xff}, new byte[] {(byte) 0x80},
            new byte[] {(byte) 0xc3, 0x28}, new byte[] {(byte) 0xc0, (byte) 0xaf},
            new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, new byte[] {(byte) 0xf0, (byte) 0x9f},
            new byte[] {(byte) 0xfe, (byte) 0xfe, (byte) 0xff}, new byte[] {(byte) 0xf8, (byte) 0x88, (byte) 0x80,
                    (byte) 0x80, (byte) 0x80});

    private JsonFaults() {
    }

    /** A body and the fault it carries. */
    record Faulty(String kind, byte[] body) {
    }

    /** A field an endpoint reads, with values it must refuse there (wrong type, out of range). */
    record Field(String name, List<JsonNode> refused) {
    }

    /** What the fuzzer knows of one endpoint's body: a valid one and how to spoil it. */
    record Shape(ObjectNode valid, List<Field> fields, List<String> required, String textField,
            List<Faulty> extra) {
    }

    static Faulty spoil(Dice dice, Shape shape) {
        int choice = dice.between(0, 10 + (shape.extra().isEmpty() ? 0 : 3));
        return switch (choice) {
            case 0 -> truncated(dice, shape.valid());
            case 1 -> garbage(dice);
            case 2 -> notUtf8(dice, shape);
            case 3, 4 -> wrongValue(dice, shape);
            case 5 -> deepNesting(dice, shape);
            case 6 -> duplicateKey(shape.valid());
            case 7 -> notAnObject(dice, shape.valid());
            case 8 -> hugeString(dice, shape);
            case 9 -> hugeArray(dice, shape);
            case 10 -> missing(dice, shape);
            default -> dice.pick(shape.extra());
        };
    }

    static byte[] bytes(JsonNode node) {
        try {
            return JSON.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Faulty truncated(Dice dice, ObjectNode valid) {
        byte[] whole = bytes(valid);
        byte[] cut = new byte[dice.between(0, whole.length - 1)];
        System.arraycopy(whole, 0, cut, 0, cut.length);
        return new Faulty("json.truncated", cut);
    }

    private static Faulty garbage(Dice dice) {
        byte[] b = dice.bytes(dice.between(1, 4096));
        String starts = "}]:,\u0000\u00ff'x"; // no JSON value starts with one of these
        b[0] = (byte) starts.charAt(dice.between(0, starts.length() - 1));
        return new Faulty("json.garbage", b);
    }

    /** Invalid UTF-8 inside a string value or a field name; the rest is valid JSON. */
    private static Faulty notUtf8(Dice dice, Shape shape) {
        ObjectNode body = shape.valid().deepCopy();
        if (dice.chance(0.7)) {
            body.put(shape.textField(), dice.text(dice.between(0, 8)) + MARK + dice.text(dice.between(0, 8)));
        } else {
            body.put(MARK, "x");
        }
        byte[] whole = bytes(body);
        String text = new String(whole, StandardCharsets.ISO_8859_1);
        int at = text.indexOf(MARK);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(whole, 0, at);
        out.writeBytes(dice.pick(NOT_UTF8));
        out.write(whole, at + MARK.length(), whole.length - at - MARK.length());
        return new Faulty("json.invalid-utf8", out.toByteArray());
    }

    private static Faulty wrongValue(Dice dice, Shape shape) {
        Field field = dice.pick(shape.fields());
        ObjectNode body = shape.valid().deepCopy();
        body.set(field.name(), dice.pick(field.refused()));
        return new Faulty("json.wrong-type-or-range", bytes(body));
    }

    /** Past the parser's depth (1000) for the whole body, or any depth in place of a string field. */
    private static Faulty deepNesting(Dice dice, Shape shape) {
        int depth = dice.chance(0.5) ? dice.between(1001, 200_000) : dice.between(2, 3000);
        String nest = "[".repeat(depth) + (dice.chance(0.5) ? "]".repeat(depth) : "");
        String text;
        if (depth > 1000 && dice.chance(0.5)) {
            text = nest;
        } else {
            ObjectNode body = shape.valid().deepCopy();
            body.put(shape.textField(), MARK);
            text = new String(bytes(body), StandardCharsets.UTF_8).replace("\"" + MARK + "\"", nest);
        }
        return new Faulty("json.deep-nesting", text.getBytes(StandardCharsets.UTF_8));
    }

    /** The first field again: last-wins parsing would take a body whose meaning depends on the parser. */
    private static Faulty duplicateKey(ObjectNode valid) {
        String text = new String(bytes(valid), StandardCharsets.UTF_8);
        String firstName = valid.fieldNames().next();
        String first = "\"" + firstName + "\":" + new String(bytes(valid.get(firstName)), StandardCharsets.UTF_8);
        return new Faulty("json.duplicate-key", ("{" + first + "," + text.substring(1))
                .getBytes(StandardCharsets.UTF_8));
    }

    private static Faulty notAnObject(Dice dice, ObjectNode valid) {
        String text = dice.pick("[]", "\"" + dice.text(5).replace("\"", "").replace("\\", "") + "\"", "42", "-0.0",
                "true", "[" + new String(bytes(valid), StandardCharsets.UTF_8) + "]", "null", "{} {}",
                new String(bytes(valid), StandardCharsets.UTF_8) + " {}");
        return new Faulty("json.not-an-object", text.getBytes(StandardCharsets.UTF_8));
    }

    /** A string field far longer than any id (up to megabytes), in a field that refuses it. */
    private static Faulty hugeString(Dice dice, Shape shape) {
        ObjectNode body = shape.valid().deepCopy();
        int length = dice.chance(0.9) ? dice.between(300, 200_000) : dice.between(1_000_000, 3_000_000);
        body.put(shape.textField(), dice.huge(length));
        return new Faulty("json.huge-string", bytes(body));
    }

    /** A huge array in place of a field, its last item a string: the wrong type (or item type) wherever it is. */
    private static Faulty hugeArray(Dice dice, Shape shape) {
        ObjectNode body = shape.valid().deepCopy();
        ArrayNode array = body.putArray(dice.chance(0.5) ? shape.textField() : dice.pick(shape.fields()).name());
        int n = dice.between(1_000, 300_000);
        for (int i = 0; i < n; i++) {
            array.add(i);
        }
        array.add("x"); // never a list of token ids, which a prompt may be
        return new Faulty("json.huge-array", bytes(body));
    }

    private static Faulty missing(Dice dice, Shape shape) {
        ObjectNode body = shape.valid().deepCopy();
        body.remove(dice.pick(shape.required()));
        return new Faulty("json.missing-field", bytes(body));
    }

    // ---------------------------------------------------------------- values fields refuse

    static List<JsonNode> notText() {
        return List.of(NODES.numberNode(42), NODES.numberNode(1.5), NODES.booleanNode(true), NODES.arrayNode(),
                NODES.objectNode(), NODES.arrayNode().add("x"));
    }

    /** Not an integer at all, or not within [min, max]. */
    static List<JsonNode> notInteger(long min, long max) {
        List<JsonNode> out = new ArrayList<>(List.of(NODES.textNode("4"), NODES.numberNode(4.5),
                NODES.booleanNode(true), NODES.arrayNode(), NODES.objectNode(),
                NODES.numberNode(new BigInteger("99999999999999999999999")), NODES.numberNode(new BigDecimal("1e400")),
                NODES.numberNode(new BigDecimal("1e3")), NODES.numberNode(new BigDecimal("-1e400"))));
        if (min > Long.MIN_VALUE) {
            out.add(NODES.numberNode(min - 1));
            out.add(NODES.numberNode(BigInteger.valueOf(min).subtract(BigInteger.TWO.pow(64))));
        }
        if (max < Long.MAX_VALUE) {
            out.add(NODES.numberNode(max + 1));
            out.add(NODES.numberNode(BigInteger.TWO.pow(64)));
        }
        return out;
    }

    /** Not a number, or a number no double holds (it would arrive as infinity). */
    static List<JsonNode> notFiniteNumber() {
        return List.of(NODES.textNode("0.5"), NODES.booleanNode(false), NODES.arrayNode(), NODES.objectNode(),
                NODES.numberNode(new BigDecimal("1e400")), NODES.numberNode(new BigDecimal("-1e400")),
                NODES.numberNode(new BigDecimal("2e308")));
    }

    static List<JsonNode> notBoolean() {
        return List.of(NODES.textNode("true"), NODES.numberNode(1), NODES.numberNode(0), NODES.arrayNode(),
                NODES.objectNode());
    }

    /** A number with more digits than the parser reads (1000), where a number is expected. */
    static String tooManyDigits(Dice dice) {
        return "1" + "0".repeat(dice.between(1000, 50_000));
    }
}
