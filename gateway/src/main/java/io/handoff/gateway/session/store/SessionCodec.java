package io.handoff.gateway.session.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import io.handoff.connector.spi.ScheduleStyle;
import io.handoff.gateway.session.CleanupObligation;
import io.handoff.gateway.session.NewSession;
import io.handoff.gateway.session.Session;
import io.handoff.gateway.session.SessionState;
import io.handoff.gateway.session.TransferDisposition;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A session as the fields of one Redis hash. Scalars the scripts reason about (state, epoch, expires, tomb,
 * pending) are plain fields; each obligation is its own {@code o:<id>} field holding JSON, so a script can record
 * one without rewriting the others.
 */
final class SessionCodec {

    static final String OBLIGATION_PREFIX = "o:";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {
    };

    private SessionCodec() {
    }

    static List<String> fieldsOf(NewSession s) {
        String now = millis(s.now());
        List<String> f = new ArrayList<>(40);
        put(f, "id", s.id());
        put(f, "tenant", s.tenant());
        put(f, "rid", s.requestId());
        put(f, "model", s.model());
        put(f, "ikey", s.idempotencyKey());
        put(f, "fp", s.fingerprint());
        put(f, "style", s.style().name());
        put(f, "disp", s.disposition().name());
        put(f, "state", SessionState.ALLOCATED.name());
        put(f, "epoch", "1");
        put(f, "created", now);
        put(f, "updated", now);
        put(f, "lease", Long.toString(s.lease().toMillis()));
        put(f, "expires", millis(s.leaseExpiresAt()));
        put(f, "renewals", "0");
        put(f, "pending", "0");
        put(f, "route", s.route() == null ? "" : s.route());
        put(f, "trace", s.traceParent() == null ? "" : s.traceParent());
        put(f, "attrs", encodeStruct(s.attributes()));
        return f;
    }

    static Session fromFields(Map<String, String> h) {
        List<CleanupObligation> obligations = new ArrayList<>();
        h.forEach((k, v) -> {
            if (k.startsWith(OBLIGATION_PREFIX)) {
                obligations.add(decodeObligation(v));
            }
        });
        obligations.sort((a, b) -> a.id().compareTo(b.id()));
        return new Session(
                h.get("id"),
                h.get("tenant"),
                h.get("rid"),
                h.get("model"),
                h.get("ikey"),
                h.get("fp"),
                ScheduleStyle.valueOf(h.get("style")),
                TransferDisposition.valueOf(h.get("disp")),
                SessionState.valueOf(h.get("state")),
                Long.parseLong(h.get("epoch")),
                instant(h.get("created")),
                instant(h.get("updated")),
                Duration.ofMillis(Long.parseLong(h.get("lease"))),
                instant(h.get("expires")),
                Integer.parseInt(h.getOrDefault("renewals", "0")),
                h.getOrDefault("reason", ""),
                instant(h.get("terminal_at")),
                instant(h.get("tomb")),
                decodeStruct(h.get("attrs")),
                h.get("route"),
                h.getOrDefault("trace", ""), // absent in records written before sessions kept their trace
                decodeMap(h.get("native")),
                obligations);
    }

    static String millis(Instant instant) {
        return Long.toString(instant.toEpochMilli());
    }

    private static Instant instant(String millis) {
        return millis == null || millis.isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(millis));
    }

    private static void put(List<String> fields, String name, String value) {
        fields.add(name);
        fields.add(value);
    }

    private static String encodeStruct(Struct struct) {
        return struct == null || struct.getFieldsCount() == 0 ? ""
                : Base64.getEncoder().encodeToString(struct.toByteArray());
    }

    private static Struct decodeStruct(String encoded) {
        if (encoded == null || encoded.isEmpty()) {
            return Struct.getDefaultInstance();
        }
        try {
            return Struct.parseFrom(Base64.getDecoder().decode(encoded));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("corrupt attributes in session record", e);
        }
    }

    private static Map<String, String> decodeMap(String json) {
        if (json == null || json.isEmpty()) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, STRING_MAP);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("corrupt native ids in session record", e);
        }
    }

    static String encodeObligation(CleanupObligation o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", o.id());
        m.put("connector", o.connector());
        m.put("endpoint", o.endpoint());
        m.put("resource", o.resource());
        m.put("handle", o.handle());
        m.put("heldUntil", o.heldUntil() == null ? null : o.heldUntil().toEpochMilli());
        m.put("pull", o.freedByPull());
        m.put("status", o.status().name());
        m.put("attempts", o.attempts());
        m.put("lastError", o.lastError());
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static CleanupObligation decodeObligation(String json) {
        try {
            Map<String, Object> m = JSON.readValue(json, Map.class);
            Object held = m.get("heldUntil");
            Map<String, String> handle = new HashMap<>();
            Object rawHandle = m.get("handle");
            if (rawHandle instanceof Map<?, ?> map) {
                map.forEach((k, v) -> handle.put(String.valueOf(k), String.valueOf(v)));
            }
            return new CleanupObligation(
                    (String) m.get("id"),
                    (String) m.get("connector"),
                    (String) m.get("endpoint"),
                    (String) m.get("resource"),
                    handle,
                    held == null ? null : Instant.ofEpochMilli(((Number) held).longValue()),
                    Boolean.TRUE.equals(m.get("pull")),
                    CleanupObligation.Status.valueOf((String) m.get("status")),
                    ((Number) m.getOrDefault("attempts", 0)).intValue(),
                    (String) m.get("lastError"));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("corrupt obligation in session record", e);
        }
    }
}
