package io.handoff.simulator;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counters of one engine. Cumulative counters survive a simulated crash/restart (so a test can still see what was
 * lost); gauges ({@code running}, {@code waiting}, pinned KV) are read live from the engine. Event-loop confined.
 */
public final class EngineStats {
    public static final String REQUESTS_TOTAL = "requests_total";
    public static final String REQUESTS_FAILED = "requests_failed";
    public static final String REQUESTS_ABORTED = "requests_aborted";
    public static final String FREED_BY_PULL = "freed_by_pull";
    public static final String FREED_BY_ABORT = "freed_by_abort";
    public static final String FREED_BY_TIMEOUT = "freed_by_timeout";
    public static final String FREED_BY_FAILURE = "freed_by_failure";
    public static final String BLOCKS_FREED_BY_PULL = "blocks_freed_by_pull";
    public static final String BLOCKS_FREED_BY_ABORT = "blocks_freed_by_abort";
    public static final String BLOCKS_FREED_BY_TIMEOUT = "blocks_freed_by_timeout";
    public static final String FREED_BY_FINISH = "freed_by_finish";
    public static final String TRANSFERS_RECEIVED = "transfers_received";
    public static final String LEAKED_TOTAL = "leaked_total";
    public static final String LOST_BY_CRASH = "kv_blocks_lost_by_crash";
    public static final String LOCAL_PREFILL_FALLBACKS = "local_prefill_fallbacks";
    public static final String CORRUPT_KV_READS = "corrupt_kv_reads";
    public static final String CRASHES = "crashes";
    public static final String RESTARTS = "restarts";
    public static final String FAULT_ERRORS = "fault_errors_injected";
    public static final String FAULT_RESETS = "fault_resets_injected";
    public static final String FAULT_CUTS = "fault_stream_cuts_injected";
    /** Holds pinned, and holds ended (freed for any reason or lost with a crash): equal once nothing is pinned. */
    public static final String HOLDS_PINNED_TOTAL = "kv_holds_pinned_total";
    public static final String HOLDS_ENDED_TOTAL = "kv_holds_ended_total";
    /** Native aborts received (per {@link AbortLedger}), and those naming an id already aborted: a repeated discharge. */
    public static final String ABORTS_TOTAL = "aborts_total";
    public static final String ABORTS_REPEATED_TOTAL = "aborts_repeated_total";
    /** Prompt tokens prefills found in the prefix cache, and those they computed. */
    public static final String PREFIX_HIT_TOKENS = "prefix_cache_hit_tokens";
    public static final String PREFIX_MISS_TOKENS = "prefix_cache_miss_tokens";

    private final Map<String, Long> counters = new LinkedHashMap<>();

    public EngineStats() {
        reset();
    }

    public void reset() {
        counters.clear();
        for (String k : new String[] {REQUESTS_TOTAL, REQUESTS_FAILED, REQUESTS_ABORTED, FREED_BY_PULL,
            FREED_BY_ABORT, FREED_BY_TIMEOUT, FREED_BY_FAILURE, FREED_BY_FINISH, BLOCKS_FREED_BY_PULL, BLOCKS_FREED_BY_ABORT,
            BLOCKS_FREED_BY_TIMEOUT, TRANSFERS_RECEIVED, LEAKED_TOTAL, LOST_BY_CRASH, LOCAL_PREFILL_FALLBACKS,
            CORRUPT_KV_READS, CRASHES, RESTARTS, FAULT_ERRORS, FAULT_RESETS, FAULT_CUTS, HOLDS_PINNED_TOTAL,
            HOLDS_ENDED_TOTAL, PREFIX_HIT_TOKENS, PREFIX_MISS_TOKENS, ABORTS_TOTAL, ABORTS_REPEATED_TOTAL}) {
            counters.put(k, 0L);
        }
    }

    public void inc(String name) {
        add(name, 1);
    }

    public void add(String name, long delta) {
        counters.merge(name, delta, Long::sum);
    }

    public long get(String name) {
        return counters.getOrDefault(name, 0L);
    }

    void countFreed(FreeReason reason, int blocks) {
        inc(HOLDS_ENDED_TOTAL);
        switch (reason) {
            case PULL:
                inc(FREED_BY_PULL);
                add(BLOCKS_FREED_BY_PULL, blocks);
                break;
            case ABORT:
                inc(FREED_BY_ABORT);
                add(BLOCKS_FREED_BY_ABORT, blocks);
                break;
            case TIMEOUT:
                inc(FREED_BY_TIMEOUT);
                add(BLOCKS_FREED_BY_TIMEOUT, blocks);
                break;
            case FAILURE:
                inc(FREED_BY_FAILURE);
                break;
            case FINISHED:
                inc(FREED_BY_FINISH);
                break;
            case RECEIVED:
                inc(TRANSFERS_RECEIVED);
                break;
            default:
                throw new IllegalArgumentException(reason.name());
        }
    }

    public void writeTo(ObjectNode out) {
        counters.forEach(out::put);
    }
}
