package io.handoff.gateway.session;

/**
 * The portable KV session states of the proposal. Seven of them are terminal: once a session reaches one, no
 * transition leaves it (see {@link SessionTransitions}).
 */
public enum SessionState {
    ALLOCATED(false),
    READY(false),
    ATTACHED(false),
    COMPLETE(true),
    BYPASSED(true),
    REJECTED(true),
    CANCELLED(true),
    FAILED(true),
    RELEASED(true),
    EXPIRED(true);

    private final boolean terminal;

    SessionState(boolean terminal) {
        this.terminal = terminal;
    }

    public boolean isTerminal() {
        return terminal;
    }

    public boolean isLive() {
        return !terminal;
    }
}
