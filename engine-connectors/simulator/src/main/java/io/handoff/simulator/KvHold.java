package io.handoff.simulator;

import java.util.function.Consumer;

/**
 * KV blocks pinned for a handoff: on a producer, the prompt's blocks kept for a remote consumer; on a consumer, blocks
 * preallocated while it waits for the transfer. {@code deadlineMs} is on the {@link SimClock}; {@link Long#MAX_VALUE}
 * means no deadline (e.g. still computing, or an engine built without a timeout).
 */
public final class KvHold {
    final String key;
    String kind;
    final int[] blocks;
    final long pinnedAtMs;
    long deadlineMs;
    long timerId = -1;
    boolean leaked;
    final Consumer<KvHold> onExpire;
    /** Free-form native data the family attaches (fingerprint, request ids). */
    Object attachment;

    KvHold(String key, String kind, int[] blocks, long pinnedAtMs, long deadlineMs, Consumer<KvHold> onExpire) {
        this.key = key;
        this.kind = kind;
        this.blocks = blocks;
        this.pinnedAtMs = pinnedAtMs;
        this.deadlineMs = deadlineMs;
        this.onExpire = onExpire;
    }

    public String key() {
        return key;
    }

    public String kind() {
        return kind;
    }

    /** Moves the hold to another phase (e.g. from "prefill" to "parked"). */
    public void kind(String k) {
        this.kind = k;
    }

    public int[] blocks() {
        return blocks.clone();
    }

    public int blockCount() {
        return blocks.length;
    }

    public long pinnedAtMs() {
        return pinnedAtMs;
    }

    public long deadlineMs() {
        return deadlineMs;
    }

    public boolean leaked() {
        return leaked;
    }

    @SuppressWarnings("unchecked")
    public <T> T attachment() {
        return (T) attachment;
    }

    public void attach(Object o) {
        this.attachment = o;
    }
}
