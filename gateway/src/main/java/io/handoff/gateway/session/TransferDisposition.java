package io.handoff.gateway.session;

/** Whether the decode side must receive transferred KV, or may (and will) prefill locally. */
public enum TransferDisposition {
    REQUIRED,
    BYPASS
}
