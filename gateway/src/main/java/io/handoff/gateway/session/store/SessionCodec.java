package io.handoff.gateway.session.store;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
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

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
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

    /**
     * An obligation as the JSON of its {@code o:<id>} field, written field by field: the scripts read {@code status}
     * and {@code heldUntil} (epoch milliseconds) with cjson. A map handed to the object mapper cost the hot path as much
     * as the rest of the record's codec; the fields and their order are what that map wrote.
     */
    static String encodeObligation(CleanupObligation o) {
        StringWriter out = new StringWriter(160);
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("id", o.id());
            g.writeStringField("connector", o.connector());
            g.writeStringField("endpoint", o.endpoint());
            g.writeStringField("resource", o.resource());
            g.writeObjectFieldStart("handle");
            for (Map.Entry<String, String> e : o.handle().entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeFieldName("heldUntil");
            if (o.heldUntil() == null) {
                g.writeNull();
            } else {
                g.writeNumber(o.heldUntil().toEpochMilli());
            }
            g.writeBooleanField("pull", o.freedByPull());
            g.writeStringField("status", o.status().name());
            g.writeNumberField("attempts", o.attempts());
            g.writeStringField("lastError", o.lastError());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** An obligation from its field's JSON, read in one pass; members it does not know are skipped. */
    static CleanupObligation decodeObligation(String json) {
        try (JsonParser p = JSON.getFactory().createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalStateException("corrupt obligation in session record: not an object");
            }
            String id = null;
            String connector = null;
            String endpoint = null;
            String resource = null;
            Map<String, String> handle = new HashMap<>();
            Instant heldUntil = null;
            boolean pull = false;
            CleanupObligation.Status status = null;
            int attempts = 0;
            String lastError = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "id" -> id = p.getValueAsString();
                    case "connector" -> connector = p.getValueAsString();
                    case "endpoint" -> endpoint = p.getValueAsString();
                    case "resource" -> resource = p.getValueAsString();
                    case "handle" -> readHandle(p, value, handle);
                    case "heldUntil" -> heldUntil = value.isNumeric() ? Instant.ofEpochMilli(p.getLongValue()) : null;
                    case "pull" -> pull = value == JsonToken.VALUE_TRUE;
                    case "status" -> status = CleanupObligation.Status.valueOf(p.getText());
                    case "attempts" -> attempts = value.isNumeric() ? p.getIntValue() : 0;
                    case "lastError" -> lastError = p.getValueAsString();
                    default -> p.skipChildren();
                }
            }
            if (status == null) {
                throw new IllegalStateException("corrupt obligation in session record: no status");
            }
            return new CleanupObligation(id, connector, endpoint, resource, handle, heldUntil, pull, status,
                    attempts, lastError);
        } catch (IOException e) {
            throw new IllegalStateException("corrupt obligation in session record", e);
        }
    }

    /** The engine's handle: string members as they are, any other value as its JSON text. */
    private static void readHandle(JsonParser p, JsonToken value, Map<String, String> handle) throws IOException {
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken member = p.nextToken();
            handle.put(key, member.isScalarValue() ? p.getText() : JSON.readTree(p).toString());
        }
    }
}
