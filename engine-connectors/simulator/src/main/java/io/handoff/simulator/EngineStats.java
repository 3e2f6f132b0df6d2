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
    /**
     * Handoff legs whose client cancelled them (its connection or stream went away, or a native abort named the
     * running request), each counted once, in the phase it was in: a prefill leg before its answer was sent; a decode
     * leg before its first token reached the client (waiting for a slot, for the KV, or for the prefill), or after at
     * least one had. Not counted: aggregated requests, a request already over (a native abort of KV parked after its
     * prefill is {@code freed_by_abort}), a stream the engine cut itself (a fault), a crash. The engine's client is
     * whoever called it: a gateway that gives up on a leg because its own client left, its deadline passed or the
     * other leg failed cancels it as any client would. Each family says in its package documentation how it tells the
     * phases apart.
     */
    public static final String CANCELLED_DURING_PREFILL = "cancelled_during_prefill";
    public static final String CANCELLED_BEFORE_FIRST_TOKEN = "cancelled_before_first_token";
    public static final String CANCELLED_MID_STREAM = "cancelled_mid_stream";
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
            HOLDS_ENDED_TOTAL, PREFIX_HIT_TOKENS, PREFIX_MISS_TOKENS, ABORTS_TOTAL, ABORTS_REPEATED_TOTAL,
            CANCELLED_DURING_PREFILL, CANCELLED_BEFORE_FIRST_TOKEN, CANCELLED_MID_STREAM}) {
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

    /** Counts a cancel of a running job once, in its phase (see {@link #CANCELLED_DURING_PREFILL}). */
    void countCancel(Job j) {
        if (j.isDone() || j.isAborted() || j.cancelCounted) {
            return;
        }
        j.cancelCounted = true;
        switch (j.leg()) {
            case PREFILL:
                inc(CANCELLED_DURING_PREFILL);
                break;
            case DECODE:
                inc(j.hasSentToken() ? CANCELLED_MID_STREAM : CANCELLED_BEFORE_FIRST_TOKEN);
                break;
            default:
                break;
        }
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
