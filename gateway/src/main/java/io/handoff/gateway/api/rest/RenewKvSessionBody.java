package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.handoff.openengine.v1.RenewKvSessionRequest;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The optional body of {@code POST /v1/kv-sessions/{id}/renew}; it becomes a {@link RenewKvSessionRequest}. */
@Schema(name = "RenewKvSession")
public record RenewKvSessionBody(
        @JsonProperty("lease_ms") @Schema(description = "Absent: the advertised default lease") Long leaseMs,
        @JsonProperty("expected_epoch") @Schema(description = "Renew only if the session is still at this epoch")
        Long expectedEpoch) {

    static final RenewKvSessionBody EMPTY = new RenewKvSessionBody(null, null);

    RenewKvSessionRequest toProto(String sessionId) {
        RenewKvSessionRequest.Builder request = RenewKvSessionRequest.newBuilder().setSessionId(sessionId);
        if (leaseMs != null) {
            request.setLease(RestLeases.toProto(leaseMs));
        }
        if (expectedEpoch != null) {
            request.setExpectedEpoch(expectedEpoch);
        }
        return request.build();
    }
}
