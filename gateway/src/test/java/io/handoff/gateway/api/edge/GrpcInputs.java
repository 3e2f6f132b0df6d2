package io.handoff.gateway.api.edge;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Duration;
import com.google.protobuf.ListValue;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.openengine.v1.AbortRequest;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.handoff.openengine.v1.GetModelInfoRequest;
import io.handoff.openengine.v1.KvOptions;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import io.handoff.openengine.v1.SamplingParams;
import io.handoff.openengine.v1.StoppingOptions;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Bad calls for the gRPC front: openengine.v1 Inference/Generate, the OpenEngineKv RPCs and Control. A call is bad
 * on the wire (bytes that are no valid message: a broken tail, a string that is not UTF-8, nesting past the
 * parser's limit, a message past the size limit), in a field (an id that is empty, too long, unknown or another
 * tenant's; an enum number no version defines; a number no engine takes) or in its metadata (no key, a key given
 * twice, participant keys that contradict each other).
 */
final class GrpcInputs {

    static final String GENERATE = "openengine.v1.Inference/Generate";
    static final String KV = "openengine.v1.OpenEngineKv/";
    static final String CONTROL = "openengine.v1.Control/";

    private final String key;
    private final String otherTenantKey;
    private final String adminKey;
    private final String foreignSessionId;
    private final String foreignRequestId;

    GrpcInputs(String key, String otherTenantKey, String adminKey, String foreignSessionId, String foreignRequestId) {
        this.key = key;
        this.otherTenantKey = otherTenantKey;
        this.adminKey = adminKey;
        this.foreignSessionId = foreignSessionId;
        this.foreignRequestId = foreignRequestId;
    }

    BadInput.Grpc next(Dice dice) {
        return switch (dice.between(0, 9)) {
            case 0, 1, 2, 3 -> generate(dice);
            case 4, 5 -> allocate(dice);
            case 6, 7 -> onSession(dice);
            default -> control(dice);
        };
    }

    // ---------------------------------------------------------------- Inference/Generate

    private BadInput.Grpc generate(Dice dice) {
        GenerateRequest valid = GenerateRequest.newBuilder().setRequestId("fz-" + dice.hex(12))
                .setModel(HttpInputs.MODEL).setPrompt("fuzz")
                .setStopping(StoppingOptions.newBuilder().setMaxTokens(4)).build();
        List<Map.Entry<String, String>> md = withKey();
        return switch (dice.between(0, 13)) {
            case 0, 1 -> wire(dice, GENERATE, true, valid, 12, 1, 2, 3);
            case 2 -> call(GENERATE, true, md, valid.toBuilder().setRequestId("").build(), "proto.empty-id");
            case 3 -> call(GENERATE, true, md, valid.toBuilder().setRequestId(dice.huge(dice.between(257, 200_000)))
                    .build(), "proto.long-id");
            case 4 -> call(GENERATE, true, md, valid.toBuilder().setModel(dice.pick("", "fz-" + dice.text(
                    dice.between(0, 300)), dice.huge(dice.between(300, 100_000)))).build(), "proto.unknown-model");
            case 5 -> {
                KvOptions.Builder kv = KvOptions.newBuilder();
                if (dice.chance(0.5)) {
                    kv.setScheduleStyleValue(dice.pick(4, 5, 99, -1, Integer.MAX_VALUE, Integer.MIN_VALUE));
                } else {
                    kv.setTransferDispositionValue(dice.pick(3, 4, 1000, -7, Integer.MAX_VALUE));
                }
                yield call(GENERATE, true, md, valid.toBuilder().setKv(kv).build(), "proto.unknown-enum");
            }
            case 6 -> call(GENERATE, true, md, valid.toBuilder().setKv(KvOptions.newBuilder().setSession(
                    KvSessionRef.newBuilder().setSessionId(dice.pick(foreignSessionId, dice.hex(32))))).build(),
                    "proto.session-on-orchestrated-generate");
            case 7 -> call(GENERATE, true, md, valid.toBuilder().clearPrompt().build(), "proto.no-input");
            case 8 -> {
                SamplingParams.Builder sampling = SamplingParams.newBuilder();
                double bad = dice.pick(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY);
                switch (dice.between(0, 5)) {
                    case 0 -> sampling.setTemperature(bad);
                    case 1 -> sampling.setTopP(bad);
                    case 2 -> sampling.setMinP(bad);
                    case 3 -> sampling.setFrequencyPenalty(bad);
                    case 4 -> sampling.setPresencePenalty(bad);
                    default -> sampling.setRepetitionPenalty(bad);
                }
                yield call(GENERATE, true, md, valid.toBuilder().setSampling(sampling).build(),
                        "proto.non-finite-number");
            }
            case 9 -> call(GENERATE, true, md, valid.toBuilder().setExtra(Struct.newBuilder().putFields("x",
                    Value.newBuilder().setNumberValue(dice.pick(Double.NaN, Double.POSITIVE_INFINITY,
                            Double.NEGATIVE_INFINITY)).build())).build(), "proto.non-finite-number");
            case 10 -> call(GENERATE, true, md, valid.toBuilder().setSampling(SamplingParams.newBuilder()
                    .setNumSequences(0)).build(), "proto.out-of-range");
            case 11 -> participant(dice, valid);
            default -> badMetadata(dice, GENERATE, true, valid, true);
        };
    }

    /** Participant legs named wrongly in metadata, or naming a session that is not the caller's. */
    private BadInput.Grpc participant(Dice dice, GenerateRequest valid) {
        List<Map.Entry<String, String>> md = new ArrayList<>(withKey());
        String kind = dice.pick("leg-unknown", "leg-repeated", "session-without-leg", "prefill-without-session",
                "decode-with-session", "prefill-unknown-session", "decode-unknown-ref");
        GenerateRequest request = valid;
        switch (kind) {
            case "leg-unknown" -> md.add(Map.entry("handoff-leg", dice.pick("", "both", "PREFILLX", "decode ,",
                    dice.hex(dice.between(1, 300)))));
            case "leg-repeated" -> {
                md.add(Map.entry("handoff-leg", "decode"));
                md.add(Map.entry("handoff-leg", "decode"));
            }
            case "session-without-leg" -> md.add(Map.entry("handoff-kv-session", dice.hex(32)));
            case "prefill-without-session" -> md.add(Map.entry("handoff-leg", "prefill"));
            case "decode-with-session" -> {
                md.add(Map.entry("handoff-leg", "decode"));
                md.add(Map.entry("handoff-kv-session", dice.hex(32)));
            }
            case "prefill-unknown-session" -> {
                md.add(Map.entry("handoff-leg", "prefill"));
                md.add(Map.entry("handoff-kv-session", dice.pick(dice.hex(32), foreignSessionId, "x",
                        dice.hex(dice.between(257, 3000)))));
            }
            default -> {
                md.add(Map.entry("handoff-leg", "decode"));
                request = valid.toBuilder().setKv(KvOptions.newBuilder().setSession(KvSessionRef.newBuilder()
                        .setSessionId(dice.pick("", dice.hex(32), foreignSessionId, dice.hex(dice.between(257,
                                3000)))))).build();
            }
        }
        return call(GENERATE, true, md, request, "proto.participant." + kind);
    }

    // ---------------------------------------------------------------- OpenEngineKv

    private BadInput.Grpc allocate(Dice dice) {
        String method = KV + "AllocateKvSession";
        AllocateKvSessionRequest valid = AllocateKvSessionRequest.newBuilder().setRequestId("fz-" + dice.hex(12))
                .setModel(HttpInputs.MODEL).setIdempotencyKey("fz-" + dice.hex(16)).build();
        List<Map.Entry<String, String>> md = withKey();
        return switch (dice.between(0, 9)) {
            case 0, 1 -> wire(dice, method, false, valid, 7, 1, 2, 3);
            case 2 -> call(method, false, md, dice.pick(valid.toBuilder().setRequestId("").build(),
                    valid.toBuilder().setModel("").build(), valid.toBuilder().setIdempotencyKey("").build()),
                    "proto.empty-id");
            case 3 -> {
                String huge = dice.huge(dice.between(257, 200_000));
                yield call(method, false, md, dice.pick(valid.toBuilder().setRequestId(huge).build(),
                        valid.toBuilder().setModel(huge).build(), valid.toBuilder().setIdempotencyKey(huge).build()),
                        "proto.long-id");
            }
            case 4 -> call(method, false, md, dice.chance(0.5)
                    ? valid.toBuilder().setScheduleStyleValue(dice.pick(4, 99, -1, Integer.MIN_VALUE)).build()
                    : valid.toBuilder().setTransferDispositionValue(dice.pick(3, 77, -2)).build(),
                    "proto.unknown-enum");
            case 5 -> call(method, false, md, valid.toBuilder().setLease(dice.pick(
                    Duration.newBuilder().setSeconds(-1).build(), Duration.newBuilder().setSeconds(0).build(),
                    Duration.newBuilder().setSeconds(Long.MAX_VALUE).build(),
                    Duration.newBuilder().setSeconds(Long.MIN_VALUE).build(),
                    Duration.newBuilder().setSeconds(1).setNanos(-5).build(),
                    Duration.newBuilder().setNanos(2_000_000_000).build(),
                    Duration.newBuilder().setSeconds(7200).build())).build(), "proto.out-of-range");
            case 6 -> call(method, false, md, valid.toBuilder().setAttributes(bigStruct(dice)).build(),
                    "proto.huge-struct");
            case 7 -> call(method, false, md, valid.toBuilder().setIdempotencyKey("generate:" + dice.hex(8)).build(),
                    "proto.reserved-id");
            default -> badMetadata(dice, method, false, valid, true);
        };
    }

    /** Get, Renew and Release of an id that is not a session of the caller's. */
    private BadInput.Grpc onSession(Dice dice) {
        String id = badSessionId(dice);
        int op = dice.between(0, 2);
        String method = KV + (op == 0 ? "GetKvSession" : op == 1 ? "RenewKvSession" : "ReleaseKvSession");
        Message valid = op == 0 ? GetKvSessionRequest.newBuilder().setSessionId(id).build()
                : op == 1 ? RenewKvSessionRequest.newBuilder().setSessionId(id).setExpectedEpoch(1)
                        .setLease(Duration.newBuilder().setSeconds(dice.pick(-1, 0, 30, Integer.MAX_VALUE))).build()
                : ReleaseKvSessionRequest.newBuilder().setSessionId(id).setReason(dice.text(dice.between(0, 50)))
                        .build();
        return switch (dice.between(0, 4)) {
            case 0 -> wire(dice, method, false, valid, -1, 1);
            case 1 -> badMetadata(dice, method, false, valid, true);
            default -> call(method, false, withKey(), valid, "proto.session-id");
        };
    }

    // ---------------------------------------------------------------- Control

    private BadInput.Grpc control(Dice dice) {
        return switch (dice.between(0, 7)) {
            case 0 -> call(CONTROL + "GetModelInfo", false, withKey(), GetModelInfoRequest.newBuilder()
                    .setModel(dice.pick("", "fz-" + dice.text(dice.between(0, 200)), dice.huge(dice.between(300,
                            100_000)))).build(), "proto.unknown-model");
            case 1 -> call(CONTROL + "Abort", false, withKey(), dice.pick(AbortRequest.getDefaultInstance(),
                    AbortRequest.newBuilder().setRequestId("").build(),
                    AbortRequest.newBuilder().setRequestId(dice.pick(foreignRequestId, "fz-" + dice.hex(12),
                            dice.huge(dice.between(257, 50_000)))).build(),
                    AbortRequest.newBuilder().setKvSession(KvSessionRef.newBuilder().setSessionId(badSessionId(dice)))
                            .build()), "proto.abort-target");
            case 2 -> wire(dice, CONTROL + "Abort", false, AbortRequest.newBuilder().setRequestId("fz-" + dice.hex(8))
                    .build(), -1, 1);
            // these messages have no string field 1 (bytes there would be an unknown field): broken bytes only
            case 3 -> wire(dice, CONTROL + dice.pick("GetServerInfo", "GetLoad", "Health"), false,
                    GetModelInfoRequest.getDefaultInstance(), -1);
            case 4 -> call(CONTROL + dice.pick("LoadLora", "UnloadLora", "ListLoras", "GetKvEventSources"), false,
                    withKey(), GetModelInfoRequest.newBuilder().setModel(dice.text(5)).build(), "proto.unimplemented");
            case 5 -> call(dice.pick("openengine.v1.Control/Nope", "openengine.v1.Nope/Generate",
                    "openengine.v2.Inference/Generate", "openengine.v1.Inference/generate"), false, withKey(),
                    GetModelInfoRequest.getDefaultInstance(), "proto.unknown-method");
            default -> badMetadata(dice, CONTROL + "Abort", false, AbortRequest.newBuilder()
                    .setRequestId(foreignRequestId).build(), false);
        };
    }

    // ---------------------------------------------------------------- on the wire

    /**
     * A message that does not parse. {@code structField}: the field of a Struct to nest past the parser's depth limit
     * (-1: none); {@code stringFields}: fields declared {@code string}, given bytes that are not UTF-8.
     */
    private BadInput.Grpc wire(Dice dice, String method, boolean streaming, Message valid, int structField,
            int... stringFields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(valid.toByteArray());
        String kind;
        List<Integer> choices = new ArrayList<>(List.of(1, 2));
        if (stringFields.length > 0) {
            choices.add(0);
        }
        if (structField > 0) {
            choices.add(3);
        }
        int choice = dice.pick(choices);
        try {
            CodedOutputStream tail = CodedOutputStream.newInstance(out);
            if (choice == 0) {
                kind = "proto.invalid-utf8";
                int field = stringFields[dice.between(0, stringFields.length - 1)];
                ByteArrayOutputStream text = new ByteArrayOutputStream();
                text.writeBytes(dice.text(dice.between(0, 10)).getBytes(StandardCharsets.UTF_8));
                text.writeBytes(dice.pick(JsonFaults.NOT_UTF8));
                tail.writeByteArray(field, text.toByteArray());
            } else if (choice == 1 || choice == 2) {
                kind = "proto.malformed";
                switch (dice.between(0, 5)) {
                    case 0 -> tail.writeUInt32NoTag((dice.between(1, 1000) << 3) | dice.pick(6, 7)); // no such type
                    case 1 -> tail.writeRawBytes(new byte[] {0x08, (byte) 0x80}); // a varint cut short
                    case 2 -> { // a length past the end
                        tail.writeTag(dice.between(1, 30), 2);
                        tail.writeUInt32NoTag(dice.between(10, Integer.MAX_VALUE));
                        tail.writeRawBytes(dice.bytes(dice.between(0, 9)));
                    }
                    case 3 -> tail.writeUInt32NoTag((dice.between(1, 1000) << 3) | 4); // a group ended, never begun
                    case 4 -> tail.writeRawBytes(new byte[] {0}); // field number 0
                    default -> { // a varint of more than ten bytes
                        tail.writeRawBytes(new byte[] {0x08});
                        tail.writeRawBytes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                                (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                                (byte) 0xff, 0x01});
                    }
                }
            } else {
                kind = "proto.deep-nesting";
                tail.writeMessage(structField, deepStruct(dice.between(55, 600)));
            }
            tail.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new BadInput.Grpc(method, streaming, withKey(), out.toByteArray(), kind);
    }

    /** A Struct nested past protobuf's recursion limit (100 messages deep), built from the inside out. */
    private static Struct deepStruct(int depth) {
        Value v = Value.newBuilder().setStringValue("bottom").build();
        for (int i = 0; i < depth; i++) {
            v = Value.newBuilder().setListValue(ListValue.newBuilder().addValues(v)).build();
        }
        return Struct.newBuilder().putFields("deep", v).build();
    }

    private static Struct bigStruct(Dice dice) {
        Struct.Builder s = Struct.newBuilder();
        String value = dice.huge(1000);
        int n = dice.between(70, 400);
        for (int i = 0; i < n; i++) {
            s.putFields("k" + i, Value.newBuilder().setStringValue(value).build());
        }
        return s.build();
    }

    // ---------------------------------------------------------------- metadata

    /**
     * A valid message whose metadata is bad: no key, an unknown key, two keys (of two tenants), or, where
     * {@code adminRefused}, an admin key (which owns no sessions and runs no Generate).
     */
    private BadInput.Grpc badMetadata(Dice dice, String method, boolean streaming, Message valid,
            boolean adminRefused) {
        List<Map.Entry<String, String>> md = new ArrayList<>();
        List<String> kinds = new ArrayList<>(List.of("no-key", "unknown-key", "repeated-authorization",
                "repeated-x-api-key"));
        if (adminRefused) {
            kinds.add("admin-key");
        }
        String kind = dice.pick(kinds);
        switch (kind) {
            case "no-key" -> {
            }
            case "unknown-key" -> md.add(Map.entry("authorization", "Bearer fz-" + dice.hex(dice.between(0, 64))));
            case "repeated-authorization" -> {
                md.add(Map.entry("authorization", "Bearer " + otherTenantKey));
                md.add(Map.entry("authorization", "Bearer " + key));
            }
            case "repeated-x-api-key" -> {
                md.add(Map.entry("x-api-key", otherTenantKey));
                md.add(Map.entry("x-api-key", key));
            }
            default -> md.add(Map.entry("authorization", "Bearer " + adminKey));
        }
        return call(method, streaming, md, valid, "proto.metadata." + kind);
    }

    private String badSessionId(Dice dice) {
        return dice.pick("", dice.hex(32), foreignSessionId, "not-a-session-id", dice.hex(31),
                dice.hex(32).toUpperCase(), dice.text(dice.between(1, 60)), dice.hex(dice.between(257, 20_000)));
    }

    private List<Map.Entry<String, String>> withKey() {
        return List.of(Map.entry("authorization", "Bearer " + key));
    }

    private static BadInput.Grpc call(String method, boolean streaming, List<Map.Entry<String, String>> md,
            Message message, String kind) {
        return new BadInput.Grpc(method, streaming, md, message.toByteArray(), kind);
    }
}
