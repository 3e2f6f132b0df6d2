package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.handoff.gateway.api.openengine.KvSessionMessages;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import io.handoff.openengine.v1.KvSessionRef;
import io.handoff.openengine.v1.KvSessionState;
import io.handoff.openengine.v1.KvTransferDisposition;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The REST session view against the proto it is derived from: no field left behind, no enum spelt twice. */
class KvSessionJsonTest {

    /** The only proto fields REST names differently; every other one keeps its proto name. */
    private static final Map<String, String> RENAMED = Map.of("ref", "id", "lease", "lease_ms");

    @Test
    void everyKvSessionFieldHasItsRestCounterpart() {
        Set<String> expected = KvSession.getDescriptor().getFields().stream().map(FieldDescriptor::getName)
                .map(name -> RENAMED.getOrDefault(name, name)).collect(Collectors.toSet());
        assertEquals(expected, jsonNames(KvSessionJson.class));
    }

    @Test
    void valuesAreCarriedOverFromTheProto() {
        Instant t = Instant.parse("2030-01-02T03:04:05.678Z");
        KvSession proto = KvSession.newBuilder()
                .setRef(KvSessionRef.newBuilder().setSessionId("0123456789abcdef0123456789abcdef"))
                .setState(KvSessionState.KV_SESSION_STATE_RELEASED)
                .setScheduleStyle(KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST)
                .setTransferDisposition(KvTransferDisposition.KV_TRANSFER_DISPOSITION_BYPASS)
                .setLeaseExpiresAt(KvSessionMessages.timestamp(t))
                .setEpoch(3).setRequestId("r").setModel("m").setTerminalReason("done")
                .setCreatedAt(KvSessionMessages.timestamp(t.minusSeconds(60)))
                .setUpdatedAt(KvSessionMessages.timestamp(t))
                .setLease(KvSessionMessages.duration(Duration.ofMillis(45_500)))
                .setRenewals(4)
                .setTombstoneExpiresAt(KvSessionMessages.timestamp(t.plusSeconds(600)))
                .setAttributes(Struct.newBuilder().putFields("k", Value.newBuilder().setStringValue("v").build()))
                .build();
        KvSessionJson json = KvSessionJson.of(proto);
        assertEquals(new KvSessionJson("0123456789abcdef0123456789abcdef", "r", "m", "released", 3,
                "generation-first", "bypass", 45_500, "2030-01-02T03:04:05.678Z", "2030-01-02T03:03:05.678Z",
                "2030-01-02T03:04:05.678Z", 4, "done", "2030-01-02T03:14:05.678Z", Map.of("k", "v")), json);
        KvSessionJson live = KvSessionJson.of(proto.toBuilder().clearTerminalReason().clearTombstoneExpiresAt()
                .build());
        assertNull(live.terminalReason());
        assertNull(live.tombstoneExpiresAt());
    }

    @Test
    void theOpenApiEnumerationsAreTheProtoValues() {
        assertEquals(spellings(KvSessionState.getDescriptor()), enumeration(KvSessionJson.class, "state"));
        assertEquals(spellings(KvScheduleStyle.getDescriptor()), enumeration(KvSessionJson.class, "scheduleStyle"));
        assertEquals(spellings(KvScheduleStyle.getDescriptor()),
                enumeration(AllocateKvSessionBody.class, "scheduleStyle"));
        assertEquals(spellings(KvTransferDisposition.getDescriptor()),
                enumeration(KvSessionJson.class, "transferDisposition"));
        assertEquals(spellings(KvTransferDisposition.getDescriptor()),
                enumeration(AllocateKvSessionBody.class, "transferDisposition"));
    }

    @Test
    void spellingsRoundTrip() {
        assertEquals("context-first", RestEnums.spell(KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST));
        assertEquals(KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT.getValueDescriptor(),
                RestEnums.parse(KvScheduleStyle.getDescriptor(), "schedule_style", "concurrent").orElseThrow());
        assertEquals(List.of("required", "bypass"), RestEnums.spellings(KvTransferDisposition.getDescriptor()));
    }

    private static List<String> spellings(EnumDescriptor type) {
        return RestEnums.spellings(type);
    }

    private static List<String> enumeration(Class<? extends Record> type, String component) {
        return List.of(field(type, component).getAnnotation(Schema.class).enumeration());
    }

    /** Annotations on a record component reach its field (neither annotation targets record components). */
    private static Field field(Class<? extends Record> type, String component) {
        try {
            return type.getDeclaredField(component);
        } catch (NoSuchFieldException e) {
            throw new AssertionError(e);
        }
    }

    private static Set<String> jsonNames(Class<? extends Record> type) {
        return Arrays.stream(type.getRecordComponents()).map(c -> {
            JsonProperty property = field(type, c.getName()).getAnnotation(JsonProperty.class);
            return property != null ? property.value() : c.getName();
        }).collect(Collectors.toSet());
    }
}
