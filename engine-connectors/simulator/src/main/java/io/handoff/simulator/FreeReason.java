package io.handoff.simulator;

/** Why pinned KV left the hold table; each reason has its own counter in {@link EngineStats}. */
public enum FreeReason {
    /** The consumer read (or was pushed) the blocks: the normal end of a handoff. */
    PULL,
    /** A client abort (connection close, abort endpoint, or a consumer's abort notification) released them. */
    ABORT,
    /** The engine's native timeout fired. */
    TIMEOUT,
    /** The request failed for another reason (transfer error, dead peer). */
    FAILURE,
    /** The request ended without a handoff (e.g. a vLLM prefill that stopped on its first token frees at once). */
    FINISHED,
    /** A consumer-side preallocation was filled by the transfer and became a running request. */
    RECEIVED
}
