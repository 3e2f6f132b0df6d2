package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.Endpoint;
import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The decode endpoints one request tries. A decode that never reached its engine may move to another endpoint of the
 * pool, up to the route's {@code decode-attempts}, where the connector's handoff data is not bound to one endpoint
 * and the client has received nothing yet; each endpoint left behind gets its breaker verdict at once. The move keeps
 * the native ids the plan minted ({@code Handoff.withDecode}): no engine holds anything for the decode under them yet.
 * A decode that reached its engine never moves, since that engine may hold KV or a running request under them.
 */
final class DecodeAttempts {

    private final Route route;
    private final Set<Endpoint> tried = new HashSet<>();
    private volatile PooledEndpoint current;
    private volatile Throwable failure;

    /** {@code first} null: the request runs no decode leg. */
    DecodeAttempts(Route route, PooledEndpoint first) {
        this.route = route;
        this.current = first;
        if (first != null) {
            tried.add(first.endpoint());
        }
    }

    /** Whether this failure of attempt {@code attempt} may be retried on another endpoint. */
    boolean retryable(Throwable f, int attempt, boolean clientHasEvents) {
        return f instanceof EngineException e && !e.sentToEngine() && attempt < route.settings().decodeAttempts()
                && route.capabilities().decodeRetryElsewhere() && !clientHasEvents;
    }

    /** Leaves the current endpoint after {@code f} and takes the next untried one, if any is available. */
    synchronized Optional<PooledEndpoint> next(Throwable f) {
        Optional<PooledEndpoint> next = route.decode().acquire(tried);
        next.ifPresent(n -> {
            current.finished(f);
            current = n;
            tried.add(n.endpoint());
        });
        return next;
    }

    PooledEndpoint current() {
        return current;
    }

    /** The decode leg failed for good. */
    void failed(Throwable f) {
        failure = f;
    }

    /** Gives the endpoint in use back to its pool, with its verdict. */
    void release() {
        if (current != null) {
            current.finished(failure);
        }
    }
}
