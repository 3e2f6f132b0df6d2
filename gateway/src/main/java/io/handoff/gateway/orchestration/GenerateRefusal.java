package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.PoolShortage;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.gateway.runtime.DrainState;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Duration;
import java.util.Optional;

/**
 * A Generate refused before acceptance. It is reported as a non-OK gRPC status (or HTTP error) with no response
 * event, and it guarantees that nothing was allocated and no engine was contacted.
 */
public final class GenerateRefusal extends RuntimeException {

    private final ErrorCode code;
    private final RefusalReason reason;
    private final boolean retryable;
    private final boolean unavailable;
    private final Duration retryAfter;
    private final boolean noSlot;

    public GenerateRefusal(ErrorCode code, RefusalReason reason, boolean retryable, String message) {
        this(code, reason, retryable, false, message);
    }

    private GenerateRefusal(ErrorCode code, RefusalReason reason, boolean retryable, boolean unavailable,
            String message) {
        this(code, reason, retryable, unavailable, message, null, false);
    }

    private GenerateRefusal(ErrorCode code, RefusalReason reason, boolean retryable, boolean unavailable,
            String message, Duration retryAfter, boolean noSlot) {
        super(ClientText.withoutAddresses(message), null, false, false);
        this.code = code;
        this.reason = reason;
        this.retryable = retryable;
        this.unavailable = unavailable;
        this.retryAfter = retryAfter;
        this.noSlot = noSlot;
    }

    /**
     * The tenant is at a rate limit: OVERLOADED (the wire's closest code) with the wait until the same request fits
     * (HTTP 429 with Retry-After, gRPC RESOURCE_EXHAUSTED with the wait in its trailers).
     */
    public static GenerateRefusal rateLimited(String message, Duration retryAfter) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_OVERLOADED, RefusalReason.RATE_LIMITED, true, false, message,
                retryAfter, false);
    }

    /**
     * The route has no slot now: its bulkhead is full, or every endpoint of a pool that takes traffic is at its limit.
     * OVERLOADED, as any overload; the one refusal a request may wait out in the route's admission queue, because a
     * request of the route that ends frees such a slot.
     */
    static GenerateRefusal noSlot(RefusalReason reason, String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_OVERLOADED, reason, true, false, message, null, true);
    }

    /** Whether this is {@link #noSlot}: one of the route's requests that ends frees what this one lacked. */
    boolean awaitsSlot() {
        return noSlot;
    }

    /** The wait a rate limit asks for; empty for every other refusal. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /**
     * No endpoint of a pool to give. Full endpoints are an overload (retry); endpoints out of service make the route
     * unavailable, retryable only when the cause can pass by itself: a probe's verdict of a wrong role or model
     * needs an operator, and the message says which verdict (Control.Health says it too). A pool whose endpoints
     * were all retired is unavailable as one out of service is.
     */
    public static GenerateRefusal noEndpoint(String route, String role, PoolShortage shortage) {
        String none = "no " + role + " endpoint of route " + route + " is available";
        return switch (shortage.kind()) {
            case FULL -> noSlot(RefusalReason.ENDPOINTS_FULL, none + ": every one is at its limit of outstanding "
                    + "requests");
            case OUT_OF_SERVICE -> new GenerateRefusal(ErrorCode.ERROR_CODE_INTERNAL, RefusalReason.BREAKERS_OPEN,
                    true, true, none + ": every one is out of service after failures, until a probe finds it healthy "
                            + "again");
            case MISCONFIGURED -> misconfigured(none, shortage);
            case EMPTY -> new GenerateRefusal(ErrorCode.ERROR_CODE_INTERNAL, RefusalReason.POOL_EMPTY, true, true,
                    none + ": the pool has no endpoint (every one was retired), until one is added");
        };
    }

    private static GenerateRefusal misconfigured(String none, PoolShortage shortage) {
        boolean wrongRole = shortage.wrongRole();
        ErrorCode code = wrongRole ? ErrorCode.ERROR_CODE_ROLE_MISMATCH : ErrorCode.ERROR_CODE_MODEL_NOT_FOUND;
        return new GenerateRefusal(code,
                wrongRole ? RefusalReason.WRONG_ROLE_ENDPOINTS : RefusalReason.WRONG_MODEL_ENDPOINTS, false, true,
                none + ": the route is misconfigured (" + String.join("; ", shortage.verdicts()) + ")");
    }

    /**
     * New work refused while this replica refuses it: DRAINING either way, as the client is told; the reason says
     * which of the two it is, this replica's stop (SIGTERM: another replica takes the work) or the deployment's drain
     * (no replica of it does). A replica stopping during a drain says it is stopping, as its message does.
     */
    static GenerateRefusal draining(DrainState drain, String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_DRAINING, drain.stopping() ? RefusalReason.REPLICA_STOPPING
                : RefusalReason.DEPLOYMENT_DRAINING, true, message);
    }

    public static GenerateRefusal invalid(String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, RefusalReason.INVALID_REQUEST, false,
                message);
    }

    public static GenerateRefusal unsupported(String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE, RefusalReason.UNSUPPORTED, false,
                message);
    }

    /** An overload other than a rate limit or a missing slot: a full queue, a wait timed out, a quota, the store. */
    public static GenerateRefusal overloaded(RefusalReason reason, String message) {
        return new GenerateRefusal(ErrorCode.ERROR_CODE_OVERLOADED, reason, true, message);
    }

    public ErrorCode code() {
        return code;
    }

    /** Why, among the causes that share {@link #code()}: the metric's {@code reason} label. */
    public RefusalReason reason() {
        return reason;
    }

    public boolean retryable() {
        return retryable;
    }

    /** Whether the route cannot serve now at all (gRPC UNAVAILABLE, HTTP 503), whatever the code says more. */
    public boolean unavailable() {
        return unavailable;
    }
}
