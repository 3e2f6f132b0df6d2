package io.handoff.gateway.session;

import java.time.Duration;
import java.util.Optional;

/** A refused session operation: the kind says why, the session (when one exists) says what it looks like now. */
public final class SessionException extends RuntimeException {

    private final SessionFailure failure;
    private final transient Session current;
    private final Duration retryAfter;

    public SessionException(SessionFailure failure, String message) {
        this(failure, message, null, null);
    }

    public SessionException(SessionFailure failure, String message, Session current) {
        this(failure, message, current, null);
    }

    public SessionException(SessionFailure failure, String message, Session current, Throwable cause) {
        this(failure, message, current, cause, null);
    }

    private SessionException(SessionFailure failure, String message, Session current, Throwable cause,
            Duration retryAfter) {
        super(message, cause, false, false);
        this.failure = failure;
        this.current = current;
        this.retryAfter = retryAfter;
    }

    /** A tenant's rate limit refused the request; the same request fits again after {@code retryAfter}. */
    public static SessionException rateLimited(String message, Duration retryAfter) {
        return new SessionException(SessionFailure.RATE_LIMITED, message, null, null, retryAfter);
    }

    /** How long until the same request can succeed, when the refusal knows (a rate limit's does). */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    public SessionFailure failure() {
        return failure;
    }

    public Optional<Session> current() {
        return Optional.ofNullable(current);
    }

    public static SessionException notFound() {
        return new SessionException(SessionFailure.NOT_FOUND, "no such KV session");
    }

    public static SessionException invalid(String message) {
        return new SessionException(SessionFailure.INVALID_ARGUMENT, message);
    }
}
