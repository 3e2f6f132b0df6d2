package io.handoff.gateway.orchestration;

import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;

import java.util.concurrent.CompletableFuture;

/**
 * Lets a running stream be stopped from outside: when the signal completes with a reason the stream completes at
 * once and its upstream (the legs) is cancelled, which aborts them through the connector. When the stream ends by
 * itself the signal is completed with null, so nothing waits on it.
 */
final class AbortableStream {

    private AbortableStream() {
    }

    private record Step(GenerateResponse event) {
    }

    static Multi<GenerateResponse> until(Multi<GenerateResponse> events, CompletableFuture<String> signal) {
        Multi<Step> steps = events.map(Step::new).onCompletion().invoke(() -> signal.complete(null));
        // an emitter, not completionStage(): cancelling it must not cancel (and so fail) the signal's stage
        Multi<Step> aborts = Multi.createFrom().emitter(emitter -> signal.whenComplete((reason, failure) -> {
            if (reason != null) {
                emitter.emit(new Step(null));
            }
            emitter.complete();
        }));
        return Multi.createBy().merging().streams(steps, aborts)
                .select().first(step -> step.event() != null)
                .map(Step::event);
    }
}
