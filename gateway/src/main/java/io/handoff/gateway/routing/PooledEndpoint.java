package io.handoff.gateway.routing;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EndpointStatus;
import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.ErrorCode;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One endpoint of a pool: its outstanding requests, its breaker and where it came from. The object outlives its
 * retirement from the pool: legs that hold it still count and release on it. Once retired, it also knows since when
 * no leg has run on it ({@link #quietSince}), which is what its pool lets it go by ({@link EndpointPool#prunable}).
 */
public final class PooledEndpoint {

    /** No leg ran on the endpoint from {@code since} on, as long as {@code legsEnded} legs had ended by then. */
    private record Quiet(Instant since, long legsEnded) {
    }

    private final Endpoint endpoint;
    private final EndpointBreaker breaker;
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Grows at each leg's end: a quiet window noted before a leg that ran (and ended) since is seen to be stale. */
    private final AtomicLong legsEnded = new AtomicLong();
    private volatile Instant retiredAt;
    private volatile Quiet quiet;
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

    /** When the endpoint was last retired from its pool; empty while it is active. */
    public Optional<Instant> retiredAt() {
        return Optional.ofNullable(retiredAt);
    }

    /** Retired at {@code at}: from then on its quiet window is watched. Called by its pool under the pool's lock. */
    void retired(Instant at) {
        retiredAt = at;
        quiet = null;
        noteQuiet(at);
    }

    /** Taken back into its pool: active again, so nothing to watch. Called by its pool under the pool's lock. */
    void reinstated() {
        retiredAt = null;
        quiet = null;
    }

    /**
     * Notes, at {@code now}, whether a leg runs on the endpoint, and answers since when none has: empty while one
     * runs. A leg that started and ended since the window was noted (a choice that read the pool just before the
     * retirement) makes the window start again at {@code now}, so the answer is never earlier than a leg's end.
     * Called by its pool under the pool's lock.
     */
    Optional<Instant> noteQuiet(Instant now) {
        // ended first, then running: a leg that ends between the two reads makes the next note start again
        long ended = legsEnded.get();
        if (outstanding.get() > 0) {
            quiet = null;
            return Optional.empty();
        }
        Quiet noted = quiet;
        if (noted == null || noted.legsEnded() != ended) {
            noted = new Quiet(now, ended);
            quiet = noted;
        }
        return Optional.of(noted.since());
    }

    /** Since when, as last noted, no leg has run on the retired endpoint; empty while one runs or none was noted. */
    public Optional<Instant> quietSince() {
        Quiet noted = quiet;
        return noted == null || retiredAt == null ? Optional.empty() : Optional.of(noted.since());
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
        legsEnded.incrementAndGet();
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
        legsEnded.incrementAndGet();
        if (failure == null) {
            breaker.succeeded();
        } else {
            breaker.failed(failure);
        }
    }
}
