package io.handoff.connector.spi;

import java.time.Instant;
import java.util.Map;

/**
 * KV an engine holds for a request after a leg, recorded by the gateway as a cleanup obligation so that any
 * replica can discharge it later through {@link EngineConnector#discharge(HeldKv)}.
 *
 * @param id          unique within the request (e.g. {@code prefill@prefill-0})
 * @param endpoint    the engine that holds it
 * @param resource    what is held, in the connector's words (e.g. {@code parked-prefill-kv})
 * @param handle      the native identities needed to release it (room, rid, disagg request id)
 * @param heldUntil   when the engine frees it by itself at the latest (null: only when the peer takes it)
 * @param releasable  whether {@link EngineConnector#discharge(HeldKv)} can free it before {@code heldUntil}
 * @param freedByPull whether the engine frees it by itself once the consumer has pulled it, and a decode leg of the
 *                    same handoff that produced output (a token, or its GenerationFinished) proves that pull; the
 *                    gateway then counts it as discharged without a call. False where the connector cannot know:
 *                    the hold is then counted until it is discharged or {@code heldUntil} passes.
 */
public record HeldKv(String id, Endpoint endpoint, String resource, Map<String, String> handle, Instant heldUntil,
        boolean releasable, boolean freedByPull) {

    public HeldKv {
        handle = Map.copyOf(handle);
    }

    /** A hold whose end by a pull the connector cannot observe: counted until discharged or its timer ends. */
    public HeldKv(String id, Endpoint endpoint, String resource, Map<String, String> handle, Instant heldUntil,
            boolean releasable) {
        this(id, endpoint, resource, handle, heldUntil, releasable, false);
    }
}
