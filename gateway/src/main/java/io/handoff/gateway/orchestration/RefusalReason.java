package io.handoff.gateway.orchestration;

import java.util.Locale;

/**
 * Why a Generate was refused before acceptance, for operators: the OpenEngine error code a client gets is shared by
 * causes that need different answers (OVERLOADED is a tenant's rate limit as much as a full fleet; DRAINING is a
 * deployment's drain as much as this replica stopping), so every refusal also names one of these. A fixed set, so
 * that the {@code reason} label of {@code handoff_generate_refused_total} stays bounded; its label is the constant
 * in lower kebab case ({@link #label()}).
 */
public enum RefusalReason {
    /** The request breaks a rule of the API or the route (a field missing, too long, out of range). */
    INVALID_REQUEST,
    /** The request asks for what the route or its engines do not offer (a style, a field, several outputs). */
    UNSUPPORTED,
    /** No route serves the model the request names. */
    UNKNOWN_MODEL,
    /** A request with the same id is running for the tenant. */
    DUPLICATE_REQUEST,
    /** A participant's leg names a session that is gone, in another state, or at another epoch. */
    SESSION_NOT_FOUND,
    /** The tenant is at one of its rate limits (requests or tokens per second). */
    RATE_LIMITED,
    /** The tenant has as many live sessions as its quota allows. */
    TENANT_QUOTA,
    /** The session store did not answer. */
    STORE_UNAVAILABLE,
    /** The route has as many requests in flight as it runs at once (its bulkhead), and no admission queue. */
    ROUTE_FULL,
    /** Every endpoint of a pool that takes traffic is at its limit of outstanding requests, and no queue. */
    ENDPOINTS_FULL,
    /** The route's admission queue was full when the request came. */
    QUEUE_FULL,
    /** The request waited in the route's admission queue until its {@code queue.timeout}. */
    QUEUE_TIMEOUT,
    /** Every endpoint of a pool is out of service: its breaker open after failures, until a probe finds it well. */
    BREAKERS_OPEN,
    /** A pool has no endpoint at all: every one was retired (by the admin API or discovery), until one is added. */
    POOL_EMPTY,
    /** Every endpoint of a pool was found serving another model than the route's. */
    WRONG_MODEL_ENDPOINTS,
    /** Every endpoint of a pool was found answering as another role than the pool's. */
    WRONG_ROLE_ENDPOINTS,
    /**
     * The route's connector could not plan the handoff for the endpoints taken, for a cause other than a field it
     * cannot carry ({@link #UNSUPPORTED}) or a value it cannot read ({@link #INVALID_REQUEST}).
     */
    PLAN_REFUSED,
    /** The deployment drains: no replica of it takes new work until the drain ends. */
    DEPLOYMENT_DRAINING,
    /** This replica is stopping (SIGTERM): other replicas take new work. */
    REPLICA_STOPPING;

    private final String label = name().toLowerCase(Locale.ROOT).replace('_', '-');

    /** The value of the metric's {@code reason} label and the trace's {@code handoff.refusal.reason}. */
    public String label() {
        return label;
    }
}
