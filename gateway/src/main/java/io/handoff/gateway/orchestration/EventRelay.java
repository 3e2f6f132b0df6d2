package io.handoff.gateway.orchestration;

import io.handoff.connector.spi.EngineException;
import io.handoff.gateway.runtime.ClientText;
import io.handoff.openengine.v1.EngineError;
import io.handoff.openengine.v1.ErrorCode;
import io.handoff.openengine.v1.FinishReason;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.GenerationFinished;
import io.handoff.openengine.v1.Usage;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Holds a relayed stream to the upstream event rules whatever a connector does: every event carries the client's
 * request id, output-scoped events carry output_index, exactly one GenerationFinished per output, Usage only on
 * the final event, nothing after the end. A stream that ends before every output finished is a failure, so the
 * client sees one terminal EngineError instead of a silently short answer. One instance per request.
 */
final class EventRelay {

    private final String requestId;
    private final int outputs;
    private final BitSet finished = new BitSet();
    private final FirstToken firstToken;
    private Usage usage;
    private boolean done;
    private boolean errored;
    private int events;

    EventRelay(String requestId, int outputs) {
        this(requestId, outputs, FirstToken.UNTIMED);
    }

    EventRelay(String requestId, int outputs, FirstToken firstToken) {
        this.requestId = requestId;
        this.outputs = outputs;
        this.firstToken = firstToken;
    }

    /**
     * The event as the client receives it, or null when it must be dropped. An event that already follows the rules
     * (the usual token) is passed on as it is: a copy is made only to change it.
     */
    GenerateResponse accept(GenerateResponse event) {
        if (done) {
            return null;
        }
        if (event.hasUsage()) {
            usage = event.getUsage();
        }
        if (event.hasError()) {
            done = true;
            errored = true;
            return count(normalized(event, false));
        }
        if (event.hasPrefillReady()) {
            done = true; // terminal success of a prefill-only request
        }
        if (event.hasToken() && finished.get(event.getToken().getOutputIndex())) {
            return null;
        }
        boolean last = false;
        if (event.hasFinished()) {
            int index = event.getFinished().getOutputIndex();
            if (finished.get(index)) {
                return null;
            }
            finished.set(index);
            if (finished.cardinality() >= outputs) {
                done = true;
                last = true;
            }
        }
        if (!event.hasToken() && !event.hasFinished() && !event.hasPrompt() && !event.hasPrefillReady()) {
            return null; // a usage-only event: its usage rides on the final event
        }
        return count(normalized(event, last));
    }

    /**
     * The event with the client's request id, an explicit output_index, and usage only where the rules allow it: on
     * the final event, which gets the newest usage seen.
     */
    private GenerateResponse normalized(GenerateResponse event, boolean last) {
        boolean rightId = event.getRequestId().equals(requestId);
        boolean indexed = (!event.hasToken() || event.getToken().hasOutputIndex())
                && (!event.hasFinished() || event.getFinished().hasOutputIndex());
        boolean usageRight = last ? usage == null || usage.equals(event.getUsage()) : !event.hasUsage();
        if (rightId && indexed && usageRight) {
            return event;
        }
        GenerateResponse.Builder b = event.toBuilder().setRequestId(requestId);
        if (event.hasToken() && !event.getToken().hasOutputIndex()) {
            b.getTokenBuilder().setOutputIndex(0);
        }
        if (event.hasFinished() && !event.getFinished().hasOutputIndex()) {
            b.getFinishedBuilder().setOutputIndex(0);
        }
        b.clearUsage();
        if (last && usage != null) {
            b.setUsage(usage);
        }
        return b.build();
    }

    private GenerateResponse count(GenerateResponse event) {
        events++;
        if (event.hasToken()) {
            firstToken.tokenRelayed();
        }
        return event;
    }

    /** Whether the stream reached its end (all outputs finished, or an error was relayed). */
    boolean done() {
        return done;
    }

    /** Whether the stream ended with an engine's EngineError. */
    boolean errored() {
        return errored;
    }

    /** Whether the client has received anything yet. */
    boolean started() {
        return events > 0;
    }

    /** Fails a stream that stopped before its end: the answer would otherwise look complete and is not. */
    void requireDone() {
        if (!done) {
            throw EngineException.sentRetryable(ErrorCode.ERROR_CODE_INTERNAL, "the decode stream ended after "
                    + finished.cardinality() + " of " + outputs + " outputs finished");
        }
    }

    /** The events that end every unfinished output as CANCELLED, the last one carrying the usage so far. */
    List<GenerateResponse> cancelRemaining(String message) {
        ArrayList<GenerateResponse> out = new ArrayList<>();
        for (int i = 0; i < outputs; i++) {
            if (!finished.get(i)) {
                out.add(GenerateResponse.newBuilder().setRequestId(requestId).setFinished(GenerationFinished
                        .newBuilder().setOutputIndex(i).setReason(FinishReason.FINISH_REASON_CANCELLED)
                        .setMessage(message)).build());
                finished.set(i);
            }
        }
        done = true;
        if (!out.isEmpty() && usage != null) {
            out.set(out.size() - 1, out.get(out.size() - 1).toBuilder().setUsage(usage).build());
        }
        return out;
    }

    /**
     * Whether the client may resend the unchanged request after this failure: only while nothing was relayed. Once
     * it has events, a resend would answer again what it already has, whatever the failure (the gateway's own
     * silence timeout and a short stream are "retryable" for the leg, not for the client's request).
     */
    boolean retryable(EngineException failure) {
        return failure.retryable() && !started();
    }

    /**
     * The one terminal EngineError of a failed request; nothing is relayed after it. Its message goes to the client:
     * no internal address stays in it.
     */
    GenerateResponse terminalError(ErrorCode code, String message, boolean retryable) {
        done = true;
        errored = true;
        return count(GenerateResponse.newBuilder().setRequestId(requestId).setError(EngineError.newBuilder()
                .setCode(code).setMessage(ClientText.withoutAddresses(message)).setRetryable(retryable)).build());
    }
}
