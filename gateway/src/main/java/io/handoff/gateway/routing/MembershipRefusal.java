package io.handoff.gateway.routing;

/**
 * A change of a pool's membership that was refused, with nothing changed. The message names routes, pools and
 * endpoints, never an address.
 */
public final class MembershipRefusal extends RuntimeException {

    /** What was wrong: no such route, pool or endpoint; input that cannot be an endpoint; a name already in use. */
    public enum Kind { NOT_FOUND, INVALID, CONFLICT }

    private final Kind kind;

    MembershipRefusal(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
