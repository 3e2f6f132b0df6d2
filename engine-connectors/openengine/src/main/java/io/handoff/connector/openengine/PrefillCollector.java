package io.handoff.connector.openengine;

import io.handoff.connector.spi.EngineException;
import io.handoff.openengine.v1.GenerateResponse;
import io.handoff.openengine.v1.KvSessionRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a prefill stream. The native success is exactly one PrefillReady with an engine-minted session, and nothing
 * after it. An engine that answered the whole request instead (output events ending every output) gives a finished
 * request. PromptOutput is dropped: plan refuses the fields that ask for it, so none is expected.
 */
final class PrefillCollector {
    private final String endpoint;
    private final DecodeEventRules outputRules;
    private final List<GenerateResponse> outputEvents = new ArrayList<>();
    private KvSessionRef ref;

    PrefillCollector(String endpoint, int outputs) {
        this.endpoint = endpoint;
        this.outputRules = new DecodeEventRules(outputs, endpoint);
    }

    /** Returns null if the event is fine, or the failure that ends the leg. */
    EngineException accept(GenerateResponse e) {
        if (ref != null) {
            return Failures.ruleBroken(endpoint, "an event followed PrefillReady, the terminal event of a prefill");
        }
        switch (e.getEventCase()) {
            case PREFILL_READY:
                if (!outputEvents.isEmpty()) {
                    return Failures.ruleBroken(endpoint, "PrefillReady after output events");
                }
                if (!e.getPrefillReady().hasKvSession() || e.getPrefillReady().getKvSession().getSessionId().isEmpty()) {
                    return Failures.ruleBroken(endpoint, "PrefillReady without a kv_session id");
                }
                ref = e.getPrefillReady().getKvSession();
                return null;
            case ERROR:
                return Failures.fromEngineError(e.getError(), endpoint);
            case PROMPT:
                return null;
            default:
                EngineException bad = outputRules.check(e);
                if (bad == null) {
                    outputEvents.add(e);
                }
                return bad;
        }
    }

    /** After an OK end: the session ref, or null when the request finished during its prefill. */
    KvSessionRef ref() {
        return ref;
    }

    List<GenerateResponse> outputEvents() {
        return outputEvents;
    }

    /** Returns null if an OK end is a complete prefill outcome, or the failure it amounts to. */
    EngineException atEnd() {
        if (ref != null) {
            return null;
        }
        if (outputEvents.isEmpty()) {
            return Failures.ruleBroken(endpoint, "the prefill ended OK without PrefillReady");
        }
        return outputRules.atEnd();
    }
}
