package io.handoff.simulator;

/**
 * Which leg of a handoff a {@link Job} serves, so that a client's cancel can be counted in the phase it landed in:
 * a prefill leg is cancelled during its prefill (its answer, the handoff's KV reference, not sent yet); a decode leg
 * before its first token or mid-stream. An aggregated request (or a decode engine's local prefill after it was told
 * to) is no handoff leg and is not counted by phase.
 */
public enum Leg {
    /** Not a handoff leg: an aggregated request. */
    NONE,
    /** The producing leg: prefills the prompt and answers with what the decode needs. */
    PREFILL,
    /** The consuming leg: takes the KV (or waits for it) and streams the tokens. */
    DECODE
}
