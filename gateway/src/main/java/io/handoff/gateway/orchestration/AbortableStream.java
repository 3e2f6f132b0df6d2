package io.handoff.gateway.orchestration;

import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Multi;

import java.util.concurrent.CompletableFuture;

/**
 * Lets a running stream be stopped from outside: when the signal completes with a reason the stream completes at
 * once and its upstream (the legs) is cancelled, which aborts them through the connector. When the stream ends by
 * itself the signal is completed with null, so nothing waits on it. The stream watches a copy of the signal, so that
 * its cancellation never cancels the signal the run reads afterwards.
 */
final class AbortableStream {

    private AbortableStream() {
    }

    private record Step(GenerateResponse event) {
    }

    static Multi<GenerateResponse> until(Multi<GenerateResponse> events, CompletableFuture<String> signal) {
        Multi<Step> steps = events.map(Step::new).onCompletion().invoke(() -> signal.complete(null));
        Multi<Step> aborts = Multi.createFrom().completionStage(signal.copy()).map(reason -> new Step(null));
        return Multi.createBy().merging().streams(steps, aborts)
                .select().first(step -> step.event() != null)
                .map(Step::event);
    }
}
