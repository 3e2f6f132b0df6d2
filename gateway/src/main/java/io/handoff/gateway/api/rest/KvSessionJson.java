package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.handoff.openengine.v1.KvSession;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.Map;

/**
 * A session as REST shows it: the openengine.v1 {@link KvSession} the gRPC service answers, field for field under
 * the proto's own snake_case names, with three changes for JSON callers. {@code ref.session_id} is {@code id};
 * the lease is {@code lease_ms}, a number; enums are spelled as in {@link RestEnums}. Times are RFC 3339 in UTC.
 * Unlike the proto3 JSON mapping, {@code epoch} stays a number and every key is always present (null while it
 * does not apply) so the shape is stable. Built only from the proto, so it cannot drift from gRPC.
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
@Schema(name = "KvSession")
public record KvSessionJson(
        @Schema(description = "32 hex digits") String id,
        @JsonProperty("request_id") String requestId,
        String model,
        @Schema(enumeration = {"allocated", "ready", "attached", "complete", "bypassed", "rejected", "cancelled",
                "failed", "released", "expired"}) String state,
        @Schema(description = "The fencing token: 1 at allocation, one more at every state transition") long epoch,
        @JsonProperty("schedule_style") @Schema(enumeration = {"context-first", "generation-first", "concurrent"})
        String scheduleStyle,
        @JsonProperty("transfer_disposition") @Schema(enumeration = {"required", "bypass"})
        String transferDisposition,
        @JsonProperty("lease_ms") @Schema(description = "The lease granted at allocation or the last renewal")
        long leaseMs,
        @JsonProperty("lease_expires_at") @Schema(format = "date-time") String leaseExpiresAt,
        @JsonProperty("created_at") @Schema(format = "date-time") String createdAt,
        @JsonProperty("updated_at") @Schema(format = "date-time") String updatedAt,
        int renewals,
        @JsonProperty("terminal_reason") @Schema(nullable = true, description = "null while live")
        String terminalReason,
        @JsonProperty("tombstone_expires_at") @Schema(nullable = true, format = "date-time",
                description = "Until when a terminal session stays queryable; null while live")
        String tombstoneExpiresAt,
        Map<String, Object> attributes) {

    static KvSessionJson of(KvSession s) {
        return new KvSessionJson(
                s.getRef().getSessionId(),
                s.getRequestId(),
                s.getModel(),
                RestEnums.spell(s.getState()),
                s.getEpoch(),
                RestEnums.spell(s.getScheduleStyle()),
                RestEnums.spell(s.getTransferDisposition()),
                Durations.toMillis(s.getLease()),
                Timestamps.toString(s.getLeaseExpiresAt()),
                Timestamps.toString(s.getCreatedAt()),
                Timestamps.toString(s.getUpdatedAt()),
                s.getRenewals(),
                s.getTerminalReason().isEmpty() ? null : s.getTerminalReason(),
                s.hasTombstoneExpiresAt() ? Timestamps.toString(s.getTombstoneExpiresAt()) : null,
                StructJson.toJson(s.getAttributes()));
    }
}
