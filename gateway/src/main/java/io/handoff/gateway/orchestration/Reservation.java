package io.handoff.gateway.orchestration;

import io.handoff.gateway.routing.BypassPolicy.Trigger;
import io.handoff.gateway.routing.DecodeCacheEstimate;
import io.handoff.gateway.routing.EndpointChoice;
import io.handoff.gateway.routing.EndpointPool;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.PromptBlocks;
import io.handoff.gateway.routing.Route;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.smallrye.mutiny.Uni;

import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What admission has taken so far: a place in the route's bulkhead, endpoints, the request id. Given back at
 * once on refusal; after acceptance the run gives back the endpoints and calls {@link #leave()}. Once every step
 * that takes something has passed, {@link #whenFreed} names who is told when it is all given back (the route's
 * admission queue, whose head may then take it).
 */
final class Reservation {
    private final Route route;
    private final AtomicBoolean accepted = new AtomicBoolean();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final AtomicBoolean left = new AtomicBoolean();
    private PooledEndpoint prefill;
    private PooledEndpoint decode;
    private PromptBlocks promptBlocks;
    private LiveRequests.RequestHandle handle;
    private volatile Runnable freed = () -> { };

    private final LiveRequests live;

    Reservation(Route route, LiveRequests live) {
        if (!route.admit()) {
            throw GenerateRefusal.noSlot(RefusalReason.ROUTE_FULL, "route " + route.name() + " is at its limit of "
                    + route.settings().maxInFlight() + " requests in flight");
        }
        this.route = route;
        this.live = live;
    }

    /** Takes a prefill endpoint for the request (whose prompt prefix a pool may follow), or refuses. */
    PooledEndpoint takePrefill(GenerateRequest request) {
        prefill = take(route.prefill(), "prefill", route.prefill().prefixKey(request));
        return prefill;
    }

    /**
     * Takes a decode endpoint for the request, or refuses with why the pool has none. On a route with the
     * uncached-prompt trigger, the endpoint likely to hold the most of the prompt in its prefix cache
     * ({@link DecodeCacheEstimate}), bounded by load; elsewhere the pool's choice.
     */
    PooledEndpoint takeDecode(GenerateRequest request) {
        if (!route.settings().bypass().has(Trigger.UNCACHED_PROMPT)) {
            decode = take(route.decode(), "decode", EndpointChoice.NO_PREFIX);
            return decode;
        }
        PromptBlocks blocks = PromptBlocks.of(request, route.settings().prefix().blockTokens());
        DecodeCacheEstimate cache = route.decodeCache();
        decode = route.decode().acquireCached(m -> cache.cachedTokens(m.endpoint().name(), blocks),
                route.settings().prefixLoadBound()).orElseThrow(() -> GenerateRefusal.noEndpoint(route.name(),
                        "decode", route.decode().shortage()));
        promptBlocks = blocks;
        return decode;
    }

    /**
     * The prompt tokens the decode endpoint taken would prefill itself, by the estimate: known only on a route with
     * the uncached-prompt trigger, once {@link #takeDecode} took one.
     */
    OptionalInt uncachedTokens() {
        if (promptBlocks == null || decode == null) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(route.decodeCache().uncachedTokens(decode.endpoint().name(), promptBlocks));
    }

    private PooledEndpoint take(EndpointPool pool, String role, long prefixKey) {
        return pool.acquire(Set.of(), prefixKey).orElseThrow(() -> GenerateRefusal.noEndpoint(route.name(), role,
                pool.shortage()));
    }

    LiveRequests.RequestHandle claim(String tenant, String requestId) {
        handle = live.claim(tenant, requestId).orElseThrow(() -> new GenerateRefusal(
                ErrorCode.ERROR_CODE_DUPLICATE_REQUEST, RefusalReason.DUPLICATE_REQUEST, false,
                "request " + requestId + " is already running"));
        return handle;
    }

    /**
     * Who is told once everything is given back. Set only after the steps that take something passed: a try that
     * is refused gives back what it took only for a moment, and telling the queue of that would have its head try
     * again, and be refused again, without end.
     */
    void whenFreed(Runnable action) {
        freed = action;
    }

    /**
     * The request runs: on a route that estimates its decode caches, the decode endpoint is taken to hold the prompt
     * from now on, as it computes it (a bypass) or receives its KV (a handoff).
     */
    void accepted() {
        accepted.set(true);
        if (promptBlocks != null && decode != null) {
            route.decodeCache().learned(decode.endpoint().name(), promptBlocks);
        }
    }

    /**
     * The decode leg moved from {@code left} to {@code next} before it reached {@code left}'s engine, which so never saw
     * the prompt: on a route that estimates its decode caches, it is {@code next} that computes or receives it.
     */
    void decodeMoved(PooledEndpoint left, PooledEndpoint next) {
        if (promptBlocks != null) {
            route.decodeCache().moved(left.endpoint().name(), next.endpoint().name(), promptBlocks);
        }
    }

    boolean isAccepted() {
        return accepted.get();
    }

    /**
     * Refused, or its client went away before acceptance: endpoints back without counting against them, the id and
     * the bulkhead place freed. Once only, however many of those paths end the request.
     */
    void cancel() {
        if (accepted.get() || !cancelled.compareAndSet(false, true)) {
            return;
        }
        if (prefill != null) {
            prefill.giveBack();
        }
        if (decode != null) {
            decode.giveBack();
        }
        leave();
    }

    void leave() {
        if (left.compareAndSet(false, true)) {
            if (handle != null) {
                live.unregister(handle.tenant(), handle.requestId(), handle);
            }
            route.leave();
            freed.run();
        }
    }

    /**
     * The run's client stream completed before its session's {@code end} was written: the route's place and the
     * request id are free now, and the run counts as running on this replica until {@code end} lands.
     */
    void leaveBefore(Uni<Void> end) {
        if (left.compareAndSet(false, true)) {
            live.endingAfterStream(handle.tenant(), handle.requestId(), handle, end);
            route.leave();
            freed.run();
        }
    }
}
