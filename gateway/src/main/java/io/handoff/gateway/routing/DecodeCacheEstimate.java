package io.handoff.gateway.routing;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An estimate, per decode endpoint, of which prompt prefixes ({@link PromptBlocks}) its prefix cache holds, for the
 * uncached-prompt bypass. It is learned, not observed: when a request is accepted on a decode endpoint, that endpoint
 * computes the prompt's KV (a bypass) or receives it (a handoff), so the prompt's blocks are assumed cached there.
 * Each endpoint keeps at most {@code cacheTokens} tokens of blocks, least recently used first out. The gateway never
 * sees an engine's real cache: the engine may have evicted earlier (other traffic, a smaller cache, a restart), and
 * then a bypass prefills more on the decode endpoint than estimated (slower, the answer the same).
 *
 * <p>Endpoints are known by name. An endpoint's estimate is forgotten when it retires ({@link PoolMembership}), so
 * that the estimates held stay as many as the active endpoints however many come and go (a pod that is replaced
 * comes back under a new name, and each estimate may hold up to {@code decode-cache-tokens} worth of blocks). One
 * that retires and comes back starts cold: it is estimated to hold less than it may, which only ever turns a bypass
 * into a handoff, never the reverse.
 */
public final class DecodeCacheEstimate {

    private final int blockTokens;
    private final int capacityBlocks;
    private final Map<String, Lru> byEndpoint = new ConcurrentHashMap<>();

    /**
     * @param cacheTokens the tokens each endpoint is assumed to keep ({@code bypass.decode-cache-tokens})
     * @param blockTokens tokens per block ({@code prefix-affinity.block-tokens}); at most {@code cacheTokens}
     */
    public DecodeCacheEstimate(int cacheTokens, int blockTokens) {
        if (blockTokens < 1 || cacheTokens < blockTokens) {
            throw new IllegalArgumentException("decode-cache-tokens must hold at least one block of " + blockTokens
                    + " tokens");
        }
        this.blockTokens = blockTokens;
        this.capacityBlocks = cacheTokens / blockTokens;
    }

    /** The prompt was accepted on the endpoint: its blocks are now (probably) in that endpoint's cache. */
    public void learned(String endpoint, PromptBlocks prompt) {
        requireBlockSize(prompt);
        byEndpoint.computeIfAbsent(endpoint, e -> new Lru(capacityBlocks)).learned(prompt);
    }

    /**
     * The request learned on {@code from} moved to {@code to} before it reached {@code from}'s engine: its blocks are
     * taken from {@code from}'s estimate (with them, any the same prefix of another request put there: that only
     * estimates less than is held, which turns a bypass into a handoff, never the reverse) and learned on {@code to}.
     */
    public void moved(String from, String to, PromptBlocks prompt) {
        requireBlockSize(prompt);
        Lru lru = byEndpoint.get(from);
        if (lru != null) {
            lru.unlearned(prompt);
        }
        learned(to, prompt);
    }

    /** The endpoint retired: whatever it comes back as, its cache is not counted on. */
    public void forget(String endpoint) {
        byEndpoint.remove(endpoint);
    }

    /** How many endpoints have an estimate. */
    public int endpoints() {
        return byEndpoint.size();
    }

    /** The prompt's tokens the endpoint probably holds: the blocks of the longest prefix it holds, whole blocks. */
    public int cachedTokens(String endpoint, PromptBlocks prompt) {
        requireBlockSize(prompt);
        Lru lru = byEndpoint.get(endpoint);
        if (lru == null) {
            return 0;
        }
        long tokens = (long) lru.leadingBlocks(prompt) * blockTokens;
        return (int) Math.min(prompt.promptTokens(), tokens);
    }

    /** The prompt's tokens the endpoint would have to prefill itself if the request went there. */
    public int uncachedTokens(String endpoint, PromptBlocks prompt) {
        return prompt.promptTokens() - cachedTokens(endpoint, prompt);
    }

    private void requireBlockSize(PromptBlocks prompt) {
        if (prompt.blockTokens() != blockTokens) {
            throw new IllegalArgumentException("blocks of " + prompt.blockTokens() + " tokens, estimate of "
                    + blockTokens);
        }
    }

    /** One endpoint's blocks by recency of use; a lookup does not count as a use. */
    private static final class Lru {
        private final LinkedHashMap<Long, Boolean> blocks;

        Lru(int capacity) {
            this.blocks = new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                    return size() > capacity;
                }
            };
        }

        /**
         * Last block first, so that a prompt's first blocks are its most recent: a prefix is only useful whole from
         * the start, so when space runs out (here, or in an engine that evicts leaf blocks first) the tail goes.
         */
        synchronized void learned(PromptBlocks prompt) {
            for (int i = prompt.count() - 1; i >= 0; i--) {
                blocks.put(prompt.hash(i), Boolean.TRUE);
            }
        }

        synchronized void unlearned(PromptBlocks prompt) {
            for (int i = 0; i < prompt.count(); i++) {
                blocks.remove(prompt.hash(i));
            }
        }

        /** How many of the prompt's blocks, from the first, are held; containsKey leaves recency as it is. */
        synchronized int leadingBlocks(PromptBlocks prompt) {
            int n = 0;
            while (n < prompt.count() && blocks.containsKey(prompt.hash(n))) {
                n++;
            }
            return n;
        }
    }
}
