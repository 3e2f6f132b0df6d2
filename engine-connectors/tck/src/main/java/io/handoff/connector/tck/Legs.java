package io.handoff.connector.tck;

import io.handoff.connector.spi.EngineConnector;
import io.handoff.connector.spi.Handoff;
import io.handoff.connector.spi.PrefillResult;
import io.handoff.openengine.v1.GenerateResponse;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a planned handoff through the SPI in its style's order, as the gateway's orchestration would. */
final class Legs {

    static final Duration WAIT = Duration.ofSeconds(20);

    private Legs() {
    }

    /** The client-visible events of one handoff. */
    static List<GenerateResponse> run(EngineConnector connector, Handoff handoff) {
        switch (handoff.style()) {
            case CONTEXT_FIRST:
                PrefillResult result = connector.prefill(handoff).await().atMost(WAIT);
                if (result instanceof PrefillResult.Finished finished) {
                    return finished.events();
                }
                return connector.decode(((PrefillResult.Ready) result).handoff()).collect().asList()
                        .await().atMost(WAIT);
            case GENERATION_FIRST:
            case CONCURRENT:
                // the decode is admitted first (generation-first) or alongside (concurrent); either way both run
                CompletableFuture<List<GenerateResponse>> decode = connector.decode(handoff).collect().asList()
                        .subscribeAsCompletionStage();
                Uni<PrefillResult> prefill = connector.prefill(handoff);
                prefill.await().atMost(WAIT);
                try {
                    return decode.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    throw new AssertionError("decode leg of " + handoff.style() + " did not complete", e);
                }
            default:
                throw new IllegalArgumentException("unknown style " + handoff.style());
        }
    }

    /** The generated text of events: the concatenated token texts of output 0. */
    static String text(List<GenerateResponse> events) {
        StringBuilder sb = new StringBuilder();
        for (GenerateResponse e : events) {
            if (e.hasToken() && e.getToken().getOutputIndex() == 0) {
                sb.append(e.getToken().getText());
            }
        }
        return sb.toString();
    }
}
