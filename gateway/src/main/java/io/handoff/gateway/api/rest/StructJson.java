package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.handoff.gateway.session.SessionException;

import java.util.Map;

/**
 * Session attributes between a JSON object and the protobuf Struct the session keeps, through the proto3 JSON
 * mapping (JsonFormat), so REST and gRPC JSON clients see the same values. Numbers become doubles either way, as
 * Struct holds no integers.
 */
final class StructJson {

    // Plain JSON text only; none of the application's request-binding rules apply to this hop.
    private static final ObjectMapper TEXT = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {
    };

    private StructJson() {
    }

    static Struct toStruct(Map<String, Object> attributes) {
        try {
            Struct.Builder struct = Struct.newBuilder();
            JsonFormat.parser().merge(TEXT.writeValueAsString(attributes), struct);
            return struct.build();
        } catch (JsonProcessingException | InvalidProtocolBufferException e) {
            throw SessionException.invalid("attributes are not a JSON object a protobuf Struct can hold");
        }
    }

    static Map<String, Object> toJson(Struct attributes) {
        try {
            return TEXT.readValue(JsonFormat.printer().print(attributes), OBJECT);
        } catch (JsonProcessingException | InvalidProtocolBufferException e) {
            throw new IllegalStateException("a stored Struct did not print as JSON", e);
        }
    }
}
