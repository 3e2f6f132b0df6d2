package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.gateway.telemetry.TracedLeg;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;
import io.vertx.core.Vertx;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A request that skips the prefill pool: one decode endpoint prefills locally. No KV changes hands, so no session
 * is allocated (the proposal allows either); the bypass shows in the request's span and in the metrics. It ends as
 * a {@link HandoffRun} does, minus the session: one {@link Ending} decided once, the same relay, the same leg limits
 * and the same breaker verdict.
 */
final class BypassRun implements RunningRequest {

    private final String tenant;
    private final GenerateRequest request;
    private final Route route;
    private final PooledEndpoint decodeSlot;
    private final EventRelay relay;
    private final RequestTrace trace;
    private final Runnable onFinish;
    private final Vertx vertx;
    private final AtomicReference<Ending> ending = new AtomicReference<>();
    private final CompletableFuture<String> stop = new CompletableFuture<>();
    private volatile Throwable failure;

    BypassRun(String tenant, GenerateRequest request, Route route, PooledEndpoint decodeSlot, int outputs,
            RequestTrace trace, FirstToken firstToken, Vertx vertx, Runnable onFinish) {
        this.vertx = vertx;
        this.tenant = tenant;
        this.request = request;
        this.route = route;
        this.decodeSlot = decodeSlot;
        this.relay = new EventRelay(request.getRequestId(), outputs, firstToken);
        this.trace = trace;
        this.onFinish = onFinish;
    }

    @Override
    public String requestId() {
        return request.getRequestId();
    }

    @Override
    public String tenant() {
        return tenant;
    }

    @Override
    public void abort(String reason) {
        Ending aborted = new Ending.Aborted(reason);
        if (decide(aborted) == aborted) {
            stop.complete(reason);
        }
    }

    Multi<GenerateResponse> stream() {
        Multi<GenerateResponse> decode = trace.stream(TracedLeg.BYPASS, decodeSlot.endpoint(), 1,
                forward -> LegLimits.idle(route.connector().decodeLocally(request.getRequestId(), request,
                        decodeSlot.endpoint(), forward), route.settings().decodeIdleTimeout(), vertx))
                .onFailure().invoke(f -> failure = f);
        return MapOrDrop.of(EndableStream.until(decode, stop), relay::accept)
                .onCompletion().switchTo(() -> tail(ending.get() != null ? ending.get() : natural()))
                .onFailure().recoverWithMulti(f -> {
                    EngineException e = Ending.Failed.asEngineFailure(f);
                    Ending decided = decide(new Ending.Failed(e));
                    if (decided instanceof Ending.Failed) {
                        RequestLog.failed(requestId(), route.name(), trace.traceId(), e, decodeSlot.endpoint());
                    }
                    return tail(decided);
                })
                .onTermination().invoke(() -> {
                    trace.ended(outcome());
                    decodeSlot.finished(failure);
                    onFinish.run();
                });
    }

    private Ending natural() {
        relay.requireDone();
        return new Ending.Completed(relay.errored());
    }

    private Ending decide(Ending proposed) {
        ending.compareAndSet(null, proposed);
        return ending.get();
    }

    private Multi<GenerateResponse> tail(Ending proposed) {
        return Multi.createFrom().iterable(decide(proposed).tail(relay));
    }

    private String outcome() {
        if (ending.get() instanceof Ending.Aborted) {
            return "cancelled";
        }
        return failure != null || relay.errored() ? "failed" : "complete";
    }
}
