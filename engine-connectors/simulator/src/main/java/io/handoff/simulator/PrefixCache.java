package io.handoff.simulator;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An engine's prefix cache, as vLLM's automatic prefix caching and SGLang's radix cache behave seen from outside: the
 * prompt's full blocks are identified by a hash chained from the first block (a block is only reusable after the same
 * blocks before it), a prefill reuses the longest run of its leading blocks that is cached and computes the rest, and
 * the least recently used blocks make room for new ones. Blocks are entered when the prefill starts, not when it
 * ends, so two concurrent prefills of one prefix both count the second as a hit (an engine computing them in one
 * batch shares the work the same way). The cache holds no KV: it only decides what a prefill costs. Event-loop
 * confined.
 */
public final class PrefixCache {

    private final int blockSize;
    private final int capacity;
    private final LinkedHashMap<Long, Boolean> blocks;

    /** @param capacity blocks kept; 0 keeps none, so every token is a miss */
    public PrefixCache(int blockSize, int capacity) {
        if (blockSize <= 0 || capacity < 0) {
            throw new IllegalArgumentException("blockSize must be positive and capacity not negative");
        }
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.blocks = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > PrefixCache.this.capacity;
            }
        };
    }

    /**
     * Looks the prompt up and enters its full blocks as most recently used. Returns how many of its leading tokens
     * were cached (whole blocks; a partial last block is always computed).
     */
    public int prefill(int[] promptIds) {
        int full = promptIds.length / blockSize;
        long chain = 0xcbf29ce484222325L;
        int cachedBlocks = 0;
        boolean matching = true;
        for (int b = 0; b < full; b++) {
            for (int i = b * blockSize; i < (b + 1) * blockSize; i++) {
                chain = (chain ^ promptIds[i]) * 0x100000001b3L;
            }
            if (matching && blocks.get(chain) != null) {
                cachedBlocks++;
            } else {
                matching = false;
                if (capacity > 0) {
                    blocks.put(chain, Boolean.TRUE);
                }
            }
        }
        return cachedBlocks * blockSize;
    }

    /** Blocks cached now. */
    public int size() {
        return blocks.size();
    }

    /** Forgets everything (a crash: the cache was in GPU memory). */
    public void clear() {
        blocks.clear();
    }
}
