package io.handoff.gateway.session;

import java.util.Optional;

/** A refused session operation: the kind says why, the session (when one exists) says what it looks like now. */
public final class SessionException extends RuntimeException {

    private final SessionFailure failure;
    private final transient Session current;

    public SessionException(SessionFailure failure, String message) {
        this(failure, message, null, null);
    }

    public SessionException(SessionFailure failure, String message, Session current) {
        this(failure, message, current, null);
    }

    public SessionException(SessionFailure failure, String message, Session current, Throwable cause) {
        super(message, cause, false, false);
        this.failure = failure;
        this.current = current;
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
