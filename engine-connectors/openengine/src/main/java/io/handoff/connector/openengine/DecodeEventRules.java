package io.handoff.connector.openengine;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateResponse;
import java.util.BitSet;

/**
 * Checks a decode stream against the upstream event rules before relaying it: output-scoped events carry an
 * output_index below the number of outputs asked for, nothing of an output follows its GenerationFinished, Usage is on
 * the final response only, PrefillReady never appears on a decode, an EngineError is terminal, and an OK end has
 * finished every output. The gateway relays what passes verbatim, so a breach is caught here, not by its client.
 */
final class DecodeEventRules {
    private final int outputs;
    private final String endpoint;
    private final BitSet finished = new BitSet();
    private boolean usageSeen;
    private boolean tokenSeen;

    DecodeEventRules(int outputs, String endpoint) {
        this.outputs = outputs;
        this.endpoint = endpoint;
    }

    /** Returns null if the event may be relayed, or the failure that ends the stream. */
    EngineException check(GenerateResponse e) {
        if (usageSeen) {
            return Failures.ruleBroken(endpoint, "an event followed the response that carried Usage");
        }
        switch (e.getEventCase()) {
            case TOKEN:
                if (!e.getToken().hasOutputIndex()) {
                    return Failures.ruleBroken(endpoint, "TokenOutput without output_index");
                }
                EngineException bad = checkIndex(e.getToken().getOutputIndex(), "TokenOutput");
                if (bad != null) {
                    return bad;
                }
                tokenSeen = true;
                break;
            case FINISHED:
                if (!e.getFinished().hasOutputIndex()) {
                    return Failures.ruleBroken(endpoint, "GenerationFinished without output_index");
                }
                EngineException badFinish = checkIndex(e.getFinished().getOutputIndex(), "GenerationFinished");
                if (badFinish != null) {
                    return badFinish;
                }
                finished.set(e.getFinished().getOutputIndex());
                break;
            case ERROR:
                return Failures.fromEngineError(e.getError(), endpoint);
            case PREFILL_READY:
                return Failures.ruleBroken(endpoint, "PrefillReady on a decode leg");
            case PROMPT:
                break;
            default:
                if (!e.hasUsage()) {
                    return Failures.ruleBroken(endpoint, "a response with no event and no Usage");
                }
        }
        usageSeen = e.hasUsage();
        return null;
    }

    private EngineException checkIndex(int index, String what) {
        if (index >= outputs) {
            return Failures.ruleBroken(endpoint, what + " for output " + index + " of " + outputs);
        }
        if (finished.get(index)) {
            return Failures.ruleBroken(endpoint, what + " after output " + index + " finished");
        }
        return null;
    }

    /** Returns null if an OK end of stream is complete, or the failure it amounts to. */
    EngineException atEnd() {
        if (finished.cardinality() < outputs) {
            return Failures.ruleBroken(endpoint, "the stream ended OK with " + finished.cardinality() + " of "
                + outputs + " outputs finished");
        }
        return null;
    }

    /** Whether the engine produced a token: it then has the KV it pulled, and the producer has let it go. */
    boolean producedTokens() {
        return tokenSeen;
    }
}
