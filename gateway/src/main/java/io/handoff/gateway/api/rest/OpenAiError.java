package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.handoff.gateway.runtime.ClientText;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Every REST refusal's body, in the shape OpenAI-style clients already parse:
 * {@code {"error": {"message", "type", "code", "param"}}}. {@code code} and {@code param} are present as null
 * when they do not apply, so clients can read them without checking for the key. Both HTTP fronts answer errors in
 * this one shape, so this is where their messages lose any internal address.
 */
@Schema(name = "Error")
public record OpenAiError(Detail error) {

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @Schema(name = "ErrorDetail")
    public record Detail(
            @Schema(description = "What went wrong, for people") String message,
            @Schema(description = "The kind of refusal, e.g. stale_epoch or idempotency_conflict; see docs/api.md")
            String type,
            @Schema(description = "The OpenEngine ErrorCode name gRPC sends in handoff-error-code; null when none",
                    nullable = true)
            String code,
            @Schema(description = "The request field at fault, when the body itself could not be read",
                    nullable = true)
            String param) {

        /** The message as a client may read it: without internal addresses ({@link ClientText}). */
        public Detail {
            message = ClientText.withoutAddresses(message);
        }
    }

    static OpenAiError of(String message, String type, String code, String param) {
        return new OpenAiError(new Detail(message, type, code, param));
    }
}
