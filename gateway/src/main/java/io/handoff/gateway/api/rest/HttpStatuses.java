package io.handoff.gateway.api.rest;

import io.handoff.gateway.api.openengine.KvSessionMessages;
import io.handoff.gateway.session.SessionFailure;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.time.Duration;
import java.util.Locale;

/**
 * The one mapping from a refused session operation to an HTTP status, the REST twin of
 * {@link io.handoff.gateway.api.grpc.GrpcStatuses}; the table is repeated in docs/api.md. The body's {@code code}
 * is the same OpenEngine ErrorCode the gRPC trailer carries, and {@code type} names the refusal's kind, because
 * several kinds share 409 here where gRPC gives each its own status.
 */
public final class HttpStatuses {

    private HttpStatuses() {
    }

    public static int of(SessionFailure failure) {
        return switch (failure) {
            // A lease above the maximum is a bad argument the caller can fix like any other: no 422 of its own.
            case INVALID_ARGUMENT, LEASE_OUT_OF_RANGE -> 400;
            case NOT_FOUND -> 404;
            // Conflicts with the session's (or deployment's) current state. Not 412: that status belongs to
            // conditional request headers, and expected_epoch travels in the body.
            case IDEMPOTENCY_CONFLICT, UNSUPPORTED, NOT_LIVE, ILLEGAL_TRANSITION, STALE_EPOCH -> 409;
            case QUOTA_EXCEEDED, RATE_LIMITED -> 429;
            case STORE_UNAVAILABLE, DRAINING -> 503;
        };
    }

    /** A refusal of the session core, or of the request before it reached the core (param: the field at fault). */
    static Response refusal(SessionFailure failure, String message, String param) {
        return error(of(failure), OpenAiError.of(message, failure.name().toLowerCase(Locale.ROOT),
                KvSessionMessages.toProto(failure).name(), param)).build();
    }

    /** A refusal with a wait the client should honour: {@code Retry-After} in whole seconds, rounded up. */
    static Response refusal(SessionFailure failure, String message, Duration retryAfter) {
        return error(of(failure), OpenAiError.of(message, failure.name().toLowerCase(Locale.ROOT),
                KvSessionMessages.toProto(failure).name(), null))
                .header(HttpHeaders.RETRY_AFTER, retryAfterSeconds(retryAfter)).build();
    }

    /** {@code Retry-After} in whole seconds, rounded up (never 0: the limit has not let the request in yet). */
    public static String retryAfterSeconds(Duration wait) {
        long seconds = wait.getSeconds() + (wait.getNano() > 0 ? 1 : 0);
        return Long.toString(Math.max(1, seconds));
    }

    static Response unauthenticated(String message) {
        return error(401, OpenAiError.of(message, "unauthenticated", null, null))
                .header(HttpHeaders.WWW_AUTHENTICATE, "Bearer").build();
    }

    static Response permissionDenied(String message) {
        return error(403, OpenAiError.of(message, "permission_denied", null, null)).build();
    }

    /** Anything else HTTP itself refuses (405, 415, a 500); its type is the reason phrase, e.g. method_not_allowed. */
    static Response other(int status, String message) {
        Response.StatusType known = Response.Status.fromStatusCode(status);
        String type = known == null ? "http_" + status
                : known.getReasonPhrase().toLowerCase(Locale.ROOT).replace(' ', '_');
        return error(status, OpenAiError.of(message, type, null, null)).build();
    }

    private static Response.ResponseBuilder error(int status, OpenAiError body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body);
    }
}
