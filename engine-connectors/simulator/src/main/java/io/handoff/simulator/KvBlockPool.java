package io.handoff.simulator;

import java.util.ArrayDeque;

/**
 * A paged KV cache: a fixed number of blocks of {@code blockSize} tokens. Blocks are handed out by id (lowest free
 * first after a reset, then LIFO) so that the ids a prefill returns look like a real engine's. Not thread-safe: it is
 * only touched on its engine's event loop.
 */
public final class KvBlockPool {
    private final int totalBlocks;
    private final int blockSize;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();

    public KvBlockPool(int totalBlocks, int blockSize) {
        if (totalBlocks <= 0 || blockSize <= 0) {
            throw new IllegalArgumentException("totalBlocks and blockSize must be positive");
        }
        this.totalBlocks = totalBlocks;
        this.blockSize = blockSize;
        reset();
    }

    /** Puts every block back (used on crash/restart: a new process has an empty cache). */
    public void reset() {
        free.clear();
        for (int i = 0; i < totalBlocks; i++) {
            free.addLast(i);
        }
    }

    /** Blocks needed to hold {@code tokens} tokens: ceil(tokens / blockSize), at least 1 for a non-empty sequence. */
    public int blocksFor(int tokens) {
        if (tokens <= 0) {
            return 0;
        }
        return (tokens + blockSize - 1) / blockSize;
    }

    /** Allocates {@code n} blocks, or returns null (and allocates nothing) when fewer are free. */
    public int[] allocate(int n) {
        if (n > free.size()) {
            return null;
        }
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = free.pollFirst();
        }
        return ids;
    }

    public void free(int[] ids) {
        if (ids == null) {
            return;
        }
        for (int id : ids) {
            free.addFirst(id);
        }
    }

    public boolean canAllocate(int n) {
        return n <= free.size();
    }

    public int totalBlocks() {
        return totalBlocks;
    }

    public int blockSize() {
        return blockSize;
    }

    public int freeBlocks() {
        return free.size();
    }

    public int usedBlocks() {
        return totalBlocks - free.size();
    }

    /** 0..1, the shape of {@code vllm:kv_cache_usage_perc}. */
    public double usage() {
        return (double) usedBlocks() / totalBlocks;
    }
}
