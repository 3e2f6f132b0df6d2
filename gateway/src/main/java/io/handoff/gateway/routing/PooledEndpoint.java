package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;

import java.util.Optional;

import java.util.concurrent.atomic.AtomicInteger;

/** One endpoint of a pool: its outstanding requests and its breaker. */
public final class PooledEndpoint {

    private final Endpoint endpoint;
    private final EndpointBreaker breaker;
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile Optional<Integer> contextLength = Optional.empty();

    PooledEndpoint(Endpoint endpoint, EndpointBreaker breaker) {
        this.endpoint = endpoint;
        this.breaker = breaker;
    }

    public Endpoint endpoint() {
        return endpoint;
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

    /** Ends one request on this endpoint; {@code failure} null means it went well as far as the endpoint goes. */
    public void release(String failure) {
        outstanding.decrementAndGet();
        if (failure == null) {
            breaker.succeeded();
        } else {
            breaker.failed(failure);
        }
    }
}
