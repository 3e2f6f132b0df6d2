package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.routing.PooledEndpoint;
import io.handoff.gateway.routing.Route;
import io.handoff.gateway.telemetry.RequestTrace;
import io.handoff.gateway.telemetry.TracedLeg;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A request that skips the prefill pool: one decode endpoint prefills locally. No KV changes hands, so no session
 * is allocated (the proposal allows either); the bypass shows in the request's span and in the metrics.
 */
final class BypassRun implements RunningRequest {

    private final String tenant;
    private final GenerateRequest request;
    private final Route route;
    private final PooledEndpoint decodeSlot;
    private final EventRelay relay;
    private final RequestTrace trace;
    private final Runnable onFinish;
    private final CompletableFuture<String> abortSignal = new CompletableFuture<>();
    private volatile Throwable failure;

    BypassRun(String tenant, GenerateRequest request, Route route, PooledEndpoint decodeSlot, int outputs,
            RequestTrace trace, Runnable onFinish) {
        this.tenant = tenant;
        this.request = request;
        this.route = route;
        this.decodeSlot = decodeSlot;
        this.relay = new EventRelay(request.getRequestId(), outputs);
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
        abortSignal.complete(reason);
    }

    Multi<GenerateResponse> stream() {
        Duration idle = route.settings().decodeIdleTimeout();
        Multi<GenerateResponse> decode = trace.stream(TracedLeg.BYPASS, decodeSlot.endpoint(), 1,
                forward -> route.connector().decodeLocally(request.getRequestId(), request, decodeSlot.endpoint(),
                        forward)
                        .ifNoItem().after(idle).failWith(() -> new EngineException(ErrorCode.ERROR_CODE_INTERNAL,
                                true, true, "the decode stream was silent for " + idle.toMillis() + " ms")))
                .onFailure().invoke(f -> failure = f);
        return AbortableStream.until(decode, abortSignal)
                .onItem().transformToIterable(event -> {
                    GenerateResponse relayed = relay.accept(event);
                    return relayed == null ? List.of() : List.of(relayed);
                })
                .onCompletion().switchTo(() -> {
                    String aborted = abortSignal.getNow(null);
                    if (aborted != null) {
                        return Multi.createFrom().iterable(relay.cancelRemaining(aborted));
                    }
                    relay.requireDone();
                    return Multi.createFrom().empty();
                })
                .onFailure().recoverWithMulti(f -> {
                    EngineException e = f instanceof EngineException ee ? ee
                            : new EngineException(ErrorCode.ERROR_CODE_INTERNAL, false, true, String.valueOf(f), f);
                    FailureLog.failed(request.getRequestId(), route.name(), e, decodeSlot.endpoint());
                    return relay.done() ? Multi.createFrom().empty() : Multi.createFrom().item(
                            relay.terminalError(e.code(), e.getMessage(), relay.retryable(e)));
                })
                .onTermination().invoke(() -> {
                    trace.ended(abortSignal.getNow(null) != null ? "cancelled"
                            : failure != null || relay.errored() ? "failed" : "complete");
                    decodeSlot.release(failure == null ? null : String.valueOf(failure.getMessage()));
                    onFinish.run();
                });
    }
}
