package io.handoff.simulator;

/** Thrown by request parsing/validation: the engine answers with {@link #status()} and the message. */
public final class Reject extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;

    public Reject(int status, String message) {
        super(message);
        this.status = status;
    }

    public static Reject badRequest(String message) {
        return new Reject(400, message);
    }

    public int status() {
        return status;
    }
}
