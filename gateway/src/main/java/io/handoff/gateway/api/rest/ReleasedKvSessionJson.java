package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.handoff.openengine.v1.ReleaseKvSessionResponse;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The answer to a release: the session as it is now, and whether it had already ended (a retried release). */
@Schema(name = "ReleasedKvSession")
public record ReleasedKvSessionJson(
        KvSessionJson session,
        @JsonProperty("already_terminal") boolean alreadyTerminal) {

    static ReleasedKvSessionJson of(ReleaseKvSessionResponse released) {
        return new ReleasedKvSessionJson(KvSessionJson.of(released.getSession()), released.getAlreadyTerminal());
    }
}
