package io.handoff.connector.openai.completion;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;

import java.util.Map;

/**
 * Protobuf {@code Struct} values as JSON for an engine body. Struct numbers are doubles; an integral one that a
 * long holds exactly is written as an integer, because engines validate integer parameters (a priority of
 * {@code 5.0} is not always accepted where {@code 5} is).
 */
public final class StructJson {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final double EXACT_LONG_LIMIT = 9.007199254740992E15; // 2^53

    private StructJson() {
    }

    public static ObjectNode toJson(Struct struct) {
        ObjectNode out = NODES.objectNode();
        for (Map.Entry<String, Value> e : struct.getFieldsMap().entrySet()) {
            out.set(e.getKey(), toJson(e.getValue()));
        }
        return out;
    }

    public static JsonNode toJson(Value value) {
        switch (value.getKindCase()) {
            case NULL_VALUE:
            case KIND_NOT_SET:
                return NODES.nullNode();
            case BOOL_VALUE:
                return NODES.booleanNode(value.getBoolValue());
            case STRING_VALUE:
                return NODES.textNode(value.getStringValue());
            case NUMBER_VALUE:
                double d = value.getNumberValue();
                if (d == Math.rint(d) && Math.abs(d) <= EXACT_LONG_LIMIT) {
                    return NODES.numberNode((long) d);
                }
                return NODES.numberNode(d);
            case STRUCT_VALUE:
                return toJson(value.getStructValue());
            case LIST_VALUE:
                return toJson(value.getListValue());
            default:
                throw new IllegalArgumentException("unknown Struct value kind " + value.getKindCase());
        }
    }

    private static ArrayNode toJson(ListValue list) {
        ArrayNode out = NODES.arrayNode();
        list.getValuesList().forEach(v -> out.add(toJson(v)));
        return out;
    }
}
