package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One endpoint of a pool: its outstanding requests, its breaker and where it came from. The object outlives its
 * retirement from the pool: legs that hold it still count and release on it.
 */
public final class PooledEndpoint {

    private final Endpoint endpoint;
    private final EndpointBreaker breaker;
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile Optional<Integer> contextLength = Optional.empty();
    private volatile EndpointSource source;

    PooledEndpoint(Endpoint endpoint, EndpointBreaker breaker, EndpointSource source) {
        this.endpoint = endpoint;
        this.breaker = breaker;
        this.source = source;
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    /** Who put the endpoint in its pool (last): configuration, an admin call or discovery. */
    public EndpointSource source() {
        return source;
    }

    void source(EndpointSource value) {
        source = value;
    }

    public EndpointBreaker breaker() {
        return breaker;
    }

    public int outstanding() {
        return outstanding.get();
    }

    /** The longest context the engine last reported through its discovery surface, where it reports one. */
    public Optional<Integer> contextLength() {
        return contextLength;
    }

    /** Keeps what a probe learned about the engine that admission checks requests against. */
    public void observed(EndpointStatus status) {
        if (status.maxContextLength().isPresent()) {
            contextLength = status.maxContextLength();
        }
    }

    /** Counts one request if the endpoint is below {@code limit}; one atomic step, so the limit holds under races. */
    boolean tryAcquire(int limit) {
        while (true) {
            int now = outstanding.get();
            if (now >= limit) {
                return false;
            }
            if (outstanding.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Gives the place back for a request that was refused before it reached the endpoint: no verdict on it. */
    public void giveBack() {
        outstanding.decrementAndGet();
    }

    /**
     * Ends one leg on this endpoint, with the one verdict every leg kind gets: a leg's failure counts against the
     * breaker unless the engine judged the request itself (a bad argument, a feature it lacks) or the leg was
     * cancelled; those say nothing about the endpoint's health. {@code legFailure} null: the leg went well.
     */
    public void finished(Throwable legFailure) {
        release(countsAgainst(legFailure) ? String.valueOf(legFailure.getMessage()) : null);
    }

    static boolean countsAgainst(Throwable legFailure) {
        if (legFailure == null) {
            return false;
        }
        return !(legFailure instanceof EngineException e && e.sentToEngine()
                && (e.code() == ErrorCode.ERROR_CODE_INVALID_ARGUMENT
                        || e.code() == ErrorCode.ERROR_CODE_UNSUPPORTED_FEATURE
                        || e.code() == ErrorCode.ERROR_CODE_CANCELLED));
    }

    /** Ends one request on this endpoint; {@code failure} null means it went well as far as the endpoint goes. */
    void release(String failure) {
        outstanding.decrementAndGet();
        if (failure == null) {
            breaker.succeeded();
        } else {
            breaker.failed(failure);
        }
    }
}
