package io.handoff.simulator.openengine;

/** What a parked session's KV "contains": the prompt fingerprint a decode continues from. */
final class ParkedKv {
    final long fingerprint;
    final int promptTokens;

    ParkedKv(long fingerprint, int promptTokens) {
        this.fingerprint = fingerprint;
        this.promptTokens = promptTokens;
    }
}
