package io.handoff.connector.spi;

/** The two halves of a disaggregated request. */
public enum Leg {
    /** Computes the prompt's KV on a producer engine and parks it. */
    PREFILL,
    /** Takes the parked KV (or prefills locally, on bypass) and generates. */
    DECODE
}
