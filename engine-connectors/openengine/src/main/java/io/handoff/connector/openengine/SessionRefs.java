package io.handoff.connector.openengine;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.KvSessionRef;
import java.util.Base64;

/**
 * Carries the engine's KvSessionRef through the gateway's plain-data records (Handoff.transferData, HeldKv.handle)
 * without loss: the serialized message in base64, next to its session id for humans and logs. A re-encoding to JSON
 * would be lossy (Struct numbers are doubles), so the bytes travel as they came.
 */
final class SessionRefs {
    static final String REF = "kv_session_ref";
    static final String SESSION_ID = "session_id";
    static final String PRODUCER = "producer";

    private SessionRefs() {
    }

    static String encode(KvSessionRef ref) {
        return Base64.getEncoder().encodeToString(ref.toByteArray());
    }

    static KvSessionRef decode(String encoded) {
        try {
            return KvSessionRef.parseFrom(Base64.getDecoder().decode(encoded));
        } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
            throw EngineException.invalid("stored kv session ref is not a KvSessionRef: " + e.getMessage(), e);
        }
    }

    static Struct transferData(KvSessionRef ref, String producer) {
        return Struct.newBuilder().putFields(REF, string(encode(ref)))
            .putFields(SESSION_ID, string(ref.getSessionId())).putFields(PRODUCER, string(producer)).build();
    }

    /** The producer's ref a context-first decode attaches to; refused if the prefill has not produced one. */
    static KvSessionRef fromTransferData(Struct data) {
        Value v = data.getFieldsMap().get(REF);
        if (v == null || v.getStringValue().isEmpty()) {
            throw EngineException.invalid("no kv session to attach to: the decode of a context-first handoff runs "
                + "after its prefill's PrefillReady");
        }
        return decode(v.getStringValue());
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }
}
