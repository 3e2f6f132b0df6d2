package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.handoff.openengine.v1.ReleaseKvSessionRequest;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The optional body of {@code POST /v1/kv-sessions/{id}/release}; it becomes a {@link ReleaseKvSessionRequest}. */
@Schema(name = "ReleaseKvSession")
public record ReleaseKvSessionBody(
        @Schema(description = "Recorded as the terminal reason; absent: \"released by caller\"") String reason,
        @JsonProperty("expected_epoch") @Schema(description = "Release only if the session is still at this epoch")
        Long expectedEpoch) {

    static final ReleaseKvSessionBody EMPTY = new ReleaseKvSessionBody(null, null);

    ReleaseKvSessionRequest toProto(String sessionId) {
        ReleaseKvSessionRequest.Builder request = ReleaseKvSessionRequest.newBuilder().setSessionId(sessionId);
        if (reason != null) {
            request.setReason(reason);
        }
        if (expectedEpoch != null) {
            request.setExpectedEpoch(expectedEpoch);
        }
        return request.build();
    }
}
