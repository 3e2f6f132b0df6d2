package io.handoff.connector.openai.http;

import io.handoff.connector.spi.Endpoint;
import io.smallrye.mutiny.Uni;

import java.time.Duration;

/**
 * One GET of a discovery probe: the engine's reply, or why there is none. A probe reports what it could not read
 * rather than failing, so that one surface that does not answer leaves what the others said in the status.
 *
 * @param reply   the reply, whatever its status; null when there is none
 * @param failure why there is no reply (the failure's message); null when there is one
 */
public record ProbeReply(HttpReply reply, String failure) {

    public static Uni<ProbeReply> get(EngineHttpClient http, Endpoint endpoint, String path, Duration timeout) {
        return http.get(endpoint, path, timeout).map(r -> new ProbeReply(r, null))
                .onFailure().recoverWithItem(f -> new ProbeReply(null, f.getMessage()));
    }

    /** Whether the engine answered with a 2xx status. */
    public boolean ok() {
        return reply != null && reply.ok();
    }

    /** Whether the engine answered 200, what a health endpoint answers while its engine is alive. */
    public boolean answered200() {
        return reply != null && reply.status() == 200;
    }

    /** The reply's body; only for a reply that is {@link #ok()}. */
    public String body() {
        return reply.body();
    }

    /** The status, or the failure, as a probe's notes give it. */
    public String describe() {
        return reply != null ? "HTTP " + reply.status() : String.valueOf(failure);
    }
}
