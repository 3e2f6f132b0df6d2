package io.handoff.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Faults injected on demand, through {@link SimEngine#faults()} or {@code POST /sim/faults}. They apply to the
 * inference endpoints only (never to discovery or {@code /sim/*}), except {@code health_status}.
 *
 * <ul>
 *   <li>{@code latency_ms}: every inference request waits this long before the engine looks at it;</li>
 *   <li>{@code response_delay_ms}: the engine finished the request but holds the response this long (an abort in
 *       that window reaches a finished request: the vLLM "abort at the instant prefill finishes" gap);</li>
 *   <li>{@code error_status} + {@code error_count}: the next N requests get that status ({@code -1}: until
 *       cleared), answered with {@code error_message} when set (an engine's own words, which may name its
 *       peers' addresses), or {@code simulated fault: status N};</li>
 *   <li>{@code reset_count}: the next N requests get their connection reset without a response;</li>
 *   <li>{@code cut_after_chunks} + {@code cut_count}: the next N streams are cut after K SSE
 *       chunks (the connection is reset shortly after the K-th event, without [DONE]);</li>
 *   <li>{@code leak}: expired holds are not freed and are counted as leaked;</li>
 *   <li>{@code health_status}: status of the health endpoints (0: normal).</li>
 * </ul>
 *
 * <p>Crash and restart are actions, not faults: {@code POST /sim/crash}.
 */
public final class Faults {
    private volatile long latencyMs;
    private volatile long responseDelayMs;
    private volatile int errorStatus = 503;
    private volatile int errorCount;
    private volatile String errorMessage = "";
    private volatile int resetCount;
    private volatile int cutAfterChunks = -1;
    private volatile int cutCount;
    private volatile boolean leak;
    private volatile int healthStatus;

    public synchronized void clear() {
        latencyMs = 0;
        responseDelayMs = 0;
        errorStatus = 503;
        errorCount = 0;
        errorMessage = "";
        resetCount = 0;
        cutAfterChunks = -1;
        cutCount = 0;
        leak = false;
        healthStatus = 0;
    }

    /** Merges the fields present in {@code json}; unknown fields are rejected. */
    public synchronized void apply(JsonNode json) {
        json.fieldNames().forEachRemaining(f -> {
            JsonNode v = json.get(f);
            switch (f) {
                case "latency_ms":
                    latencyMs = v.asLong();
                    break;
                case "response_delay_ms":
                    responseDelayMs = v.asLong();
                    break;
                case "error_status":
                    errorStatus = v.asInt();
                    if (!json.has("error_count")) {
                        errorCount = 1;
                    }
                    break;
                case "error_count":
                    errorCount = v.asInt();
                    break;
                case "error_message":
                    errorMessage = v.asText();
                    break;
                case "reset_count":
                    resetCount = v.asInt();
                    break;
                case "cut_after_chunks":
                    cutAfterChunks = v.asInt();
                    if (!json.has("cut_count")) {
                        cutCount = 1;
                    }
                    break;
                case "cut_count":
                    cutCount = v.asInt();
                    break;
                case "leak":
                    leak = v.asBoolean();
                    break;
                case "health_status":
                    healthStatus = v.asInt();
                    break;
                default:
                    throw new IllegalArgumentException("unknown fault " + f);
            }
        });
    }

    public synchronized void writeTo(ObjectNode out) {
        out.put("latency_ms", latencyMs);
        out.put("response_delay_ms", responseDelayMs);
        out.put("error_status", errorStatus);
        out.put("error_count", errorCount);
        out.put("error_message", errorMessage);
        out.put("reset_count", resetCount);
        out.put("cut_after_chunks", cutAfterChunks);
        out.put("cut_count", cutCount);
        out.put("leak", leak);
        out.put("health_status", healthStatus);
    }

    // ---- fluent Java API ----

    public Faults latencyMs(long ms) {
        latencyMs = ms;
        return this;
    }

    public Faults responseDelayMs(long ms) {
        responseDelayMs = ms;
        return this;
    }

    public synchronized Faults errorNext(int status, int count) {
        errorStatus = status;
        errorCount = count;
        return this;
    }

    /** The next {@code count} requests get {@code status} with the engine's own {@code message}. */
    public synchronized Faults errorNext(int status, int count, String message) {
        errorNext(status, count);
        errorMessage = message;
        return this;
    }

    public synchronized Faults resetNext(int count) {
        resetCount = count;
        return this;
    }

    public synchronized Faults cutStreams(int afterChunks, int count) {
        cutAfterChunks = afterChunks;
        cutCount = count;
        return this;
    }

    public Faults leak(boolean on) {
        leak = on;
        return this;
    }

    public Faults healthStatus(int status) {
        healthStatus = status;
        return this;
    }

    // ---- consumption by the engine ----

    /** What an injected error says. */
    public String errorMessage(int status) {
        String m = errorMessage;
        return m.isEmpty() ? "simulated fault: status " + status : m;
    }

    public long latencyMs() {
        return latencyMs;
    }

    public long responseDelayMs() {
        return responseDelayMs;
    }

    public boolean leak() {
        return leak;
    }

    public int healthStatus() {
        return healthStatus;
    }

    /** Returns the status to fail this request with, or 0; consumes one error. */
    public synchronized int takeError() {
        if (errorCount == 0) {
            return 0;
        }
        if (errorCount > 0) {
            errorCount--;
        }
        return errorStatus;
    }

    public synchronized boolean takeReset() {
        if (resetCount == 0) {
            return false;
        }
        if (resetCount > 0) {
            resetCount--;
        }
        return true;
    }

    /** Returns after how many chunks to cut this stream, or -1; consumes one cut. */
    public synchronized int takeCut() {
        if (cutCount == 0 || cutAfterChunks < 0) {
            return -1;
        }
        if (cutCount > 0) {
            cutCount--;
        }
        return cutAfterChunks;
    }
}
