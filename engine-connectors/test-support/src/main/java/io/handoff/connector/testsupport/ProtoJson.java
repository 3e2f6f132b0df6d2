package io.handoff.connector.testsupport;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;

/** Protobuf messages from JSON text (the proto3 JSON mapping), so that test requests can be written as JSON. */
public final class ProtoJson {

    private ProtoJson() {
    }

    /** A {@link Struct} (a request's {@code extra}) from a JSON object. */
    public static Struct struct(String json) {
        return merge(json, Struct.newBuilder()).build();
    }

    /** Merges {@code json} into {@code builder}; JSON the message cannot take is an IllegalArgumentException. */
    public static <B extends Message.Builder> B merge(String json, B builder) {
        try {
            JsonFormat.parser().merge(json, builder);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(json, e);
        }
        return builder;
    }
}
