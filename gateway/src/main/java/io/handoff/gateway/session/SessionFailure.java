package io.handoff.gateway.session;

/**
 * Why a session operation was refused. Each kind maps to exactly one gRPC status and one HTTP status at the edges
 * (see docs/api.md); the core never speaks either protocol.
 */
public enum SessionFailure {
    /** A required field is missing or malformed, or a limit on its size is exceeded. */
    INVALID_ARGUMENT,
    /** The lease asked for is longer than the advertised maximum. */
    LEASE_OUT_OF_RANGE,
    /** No such session for this tenant (unknown, purged, or another tenant's). */
    NOT_FOUND,
    /** The idempotency key was used before with a different request. */
    IDEMPOTENCY_CONFLICT,
    /** The explicit schedule style or disposition is not supported by this deployment. */
    UNSUPPORTED,
    /** The session is terminal, or its lease has already run out, so the operation cannot apply. */
    NOT_LIVE,
    /** The state does not allow this move (e.g. COMPLETE before ATTACHED). */
    ILLEGAL_TRANSITION,
    /** The caller acted on an epoch that is no longer current: a stale actor, fenced off. */
    STALE_EPOCH,
    /** The tenant already has as many live sessions as it may have. */
    QUOTA_EXCEEDED,
    /** The tenant is at one of its rate limits (requests or tokens per second); the refusal says until when. */
    RATE_LIMITED,
    /** The session store cannot be reached; nothing is known to have changed. */
    STORE_UNAVAILABLE,
    /** The deployment is draining: it allocates no new session; live ones go on. */
    DRAINING
}
