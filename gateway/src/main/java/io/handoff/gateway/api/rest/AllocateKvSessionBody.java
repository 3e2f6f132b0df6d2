package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvTransferDisposition;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.Map;

/**
 * The body of {@code POST /v1/kv-sessions}. It becomes the same {@link AllocateKvSessionRequest} a gRPC caller
 * sends; the idempotency key travels in the {@code Idempotency-Key} header instead of the body. Absent fields
 * mean what the proto's unset fields mean, and the session service validates them, not this class.
 */
@Schema(name = "AllocateKvSession")
public record AllocateKvSessionBody(
        @JsonProperty("request_id") @Schema(required = true) String requestId,
        @Schema(required = true) String model,
        @JsonProperty("schedule_style") @Schema(enumeration = {"context-first", "generation-first", "concurrent"},
                description = "Absent: the deployment's default style")
        String scheduleStyle,
        @JsonProperty("transfer_disposition") @Schema(enumeration = {"required", "bypass"},
                description = "Absent: required")
        String transferDisposition,
        @JsonProperty("lease_ms") @Schema(description = "Absent: the advertised default lease")
        Long leaseMs,
        @Schema(description = "Any JSON object, kept with the session") Map<String, Object> attributes) {

    static final AllocateKvSessionBody EMPTY = new AllocateKvSessionBody(null, null, null, null, null, null);

    AllocateKvSessionRequest toProto(String idempotencyKey) {
        AllocateKvSessionRequest.Builder request = AllocateKvSessionRequest.newBuilder()
                .setRequestId(requestId == null ? "" : requestId)
                .setModel(model == null ? "" : model)
                .setIdempotencyKey(idempotencyKey);
        RestEnums.parse(KvScheduleStyle.getDescriptor(), "schedule_style", scheduleStyle)
                .ifPresent(style -> request.setScheduleStyle(KvScheduleStyle.valueOf(style)));
        RestEnums.parse(KvTransferDisposition.getDescriptor(), "transfer_disposition", transferDisposition)
                .ifPresent(disposition -> request.setTransferDisposition(KvTransferDisposition.valueOf(disposition)));
        if (leaseMs != null) {
            request.setLease(RestLeases.toProto(leaseMs));
        }
        if (attributes != null) {
            request.setAttributes(StructJson.toStruct(attributes));
        }
        return request.build();
    }
}
