package io.handoff.connector.trtllm;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Mints {@code disagg_request_id}s: 63-bit values in {@code [2^62, 2^63)}, so always at or above 2^40 (below is the
 * workers' local id space). Layout: {@code 0 | 1 | node_id (8) | sequence (54)}. The sequence is one atomic counter
 * per connector, seeded at random, so ids of one connector never repeat (for 2^54 ids), replicas with distinct node
 * ids never collide, and a restarted replica starts somewhere else in its space. An id is never reused for a retry.
 */
final class DisaggIds {

    static final long MIN_GLOBAL_ID = 1L << 40;
    private static final long TOP = 1L << 62;
    private static final int SEQUENCE_BITS = 54;
    private static final long SEQUENCE_MASK = (1L << SEQUENCE_BITS) - 1;

    private final long node;
    private final AtomicLong sequence;

    DisaggIds(int nodeId) {
        this(nodeId, new SecureRandom().nextLong() & SEQUENCE_MASK);
    }

    DisaggIds(int nodeId, long seed) {
        if (nodeId < 0 || nodeId > 255) {
            throw new IllegalArgumentException("node id must be in 0..255");
        }
        this.node = (long) nodeId << SEQUENCE_BITS;
        this.sequence = new AtomicLong(seed & SEQUENCE_MASK);
    }

    long next() {
        return TOP | node | (sequence.getAndIncrement() & SEQUENCE_MASK);
    }
}
