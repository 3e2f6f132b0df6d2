package io.handoff.connector.spi;

import io.handoff.openengine.v1.GenerateResponse;

import java.util.List;

/** How a prefill leg ended, when it did not fail. */
public sealed interface PrefillResult {

    /** What the producer engine holds after the leg, to be recorded as cleanup obligations. */
    List<HeldKv> held();

    /**
     * The KV is parked for the decode leg.
     *
     * @param handoff the plan with the producer's transfer data filled in
     * @param held    what the producer engine now holds, to be recorded as cleanup obligations
     */
    record Ready(Handoff handoff, List<HeldKv> held) implements PrefillResult {
        public Ready {
            held = List.copyOf(held);
        }
    }

    /**
     * The request completed during its prefill (e.g. it stopped on its first token): no decode leg follows.
     *
     * @param events the request's complete answer as openengine.v1 events, ending with GenerationFinished
     * @param held   anything the producer still holds regardless
     */
    record Finished(List<GenerateResponse> events, List<HeldKv> held) implements PrefillResult {
        public Finished {
            events = List.copyOf(events);
            held = List.copyOf(held);
        }
    }
}
