package io.handoff.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every operation the clients made and its answer, every fault injected, and every observation of a session (its
 * state and epoch as one answer showed it, with when the call started and when its answer arrived). Kept in memory,
 * written to {@code history.jsonl} at the end; the checks read it.
 */
final class History {

    /** One call and its answer. {@code session} and {@code key} are empty where the call named none. */
    record Op(long seq, String kind, String replica, long startMs, long endMs, String key, String session,
            String outcome, String detail) {
    }

    /** A session as one answer showed it. {@code invokedNs}/{@code answeredNs} order observations in real time. */
    record Observation(String session, String state, long epoch, long invokedNs, long answeredNs, String via) {
    }

    /** One allocation's answer under an idempotency key, with when it was sent and answered. */
    record KeyAnswer(String session, long invokedNs, long answeredNs) {
    }

    /**
     * A fault that takes acknowledged writes from the store, between {@code startNs} and {@code endNs}
     * ({@link System#nanoTime()}; {@code startMs}, {@code endMs} on the history's clock): a wipe takes everything; a master's kill takes what it had not yet replicated
     * (and may leave an older state of a session behind).
     */
    record StoreLoss(String kind, long startNs, long endNs, long startMs, long endMs) {
        boolean partial() {
            return kind.equals(MASTER_KILL);
        }
    }

    static final String WIPE = "redis-wipe";
    static final String KILL_EMPTY = "redis-kill-empty";
    static final String MASTER_KILL = "redis-master-kill";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final long t0 = System.currentTimeMillis();
    private final AtomicLong seq = new AtomicLong();
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String[]> events = new ConcurrentLinkedQueue<>();
    private final Map<String, ConcurrentLinkedQueue<Observation>> observations = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> sessionsByKey = new ConcurrentHashMap<>();
    private final Map<String, String> keyRequests = new ConcurrentHashMap<>();
    private final Map<String, ConcurrentLinkedQueue<KeyAnswer>> keyAnswers = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<StoreLoss> losses = new ConcurrentLinkedQueue<>();

    long now() {
        return System.currentTimeMillis() - t0;
    }

    /** A wall-clock instant (epoch ms, as the simulators stamp their events) on the history's clock. */
    long sinceStartMs(long wallMs) {
        return wallMs - t0;
    }

    void op(String kind, String replica, long startMs, String key, String session, String outcome, String detail) {
        ops.add(new Op(seq.incrementAndGet(), kind, replica, startMs, now(), key == null ? "" : key,
                session == null ? "" : session, outcome, detail == null ? "" : detail));
    }

    void event(String kind, String detail) {
        events.add(new String[] {Long.toString(now()), kind, detail});
    }

    void observe(String session, String state, long epoch, long invokedNs, long answeredNs, String via) {
        observations.computeIfAbsent(session, s -> new ConcurrentLinkedQueue<>())
                .add(new Observation(session, state, epoch, invokedNs, answeredNs, via));
    }

    /** An allocation under {@code key}, sent at {@code invokedNs}, answered {@code session} at {@code answeredNs}. */
    void allocated(String key, String session, long invokedNs, long answeredNs) {
        sessionsByKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(session);
        keyAnswers.computeIfAbsent(key, k -> new ConcurrentLinkedQueue<>())
                .add(new KeyAnswer(session, invokedNs, answeredNs));
    }

    Map<String, ConcurrentLinkedQueue<KeyAnswer>> keyAnswers() {
        return keyAnswers;
    }

    /** The store lost acknowledged writes between these two instants (a fault the harness injected). */
    void storeLoss(String kind, long startNs, long endNs) {
        long nowNs = System.nanoTime();
        long nowMs = now();
        losses.add(new StoreLoss(kind, startNs, endNs, nowMs - (nowNs - startNs) / 1_000_000,
                nowMs - (nowNs - endNs) / 1_000_000));
    }

    List<StoreLoss> storeLosses() {
        return new ArrayList<>(losses);
    }

    /** An idempotency key was used (answered or not), with the request id it carries. */
    void keyUsed(String key, String requestId) {
        keyRequests.put(key, requestId);
    }

    Map<String, String> keys() {
        return new TreeMap<>(keyRequests);
    }

    Map<String, Set<String>> sessionsByKey() {
        return sessionsByKey;
    }

    Map<String, ConcurrentLinkedQueue<Observation>> observations() {
        return observations;
    }

    List<Op> ops() {
        return new ArrayList<>(ops);
    }

    List<String[]> events() {
        return new ArrayList<>(events);
    }

    /** Writes every fault, operation and observation, one JSON object a line. */
    void dump(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (String[] e : events) {
                ObjectNode o = JSON.createObjectNode().put("type", "fault").put("at_ms", Long.parseLong(e[0]))
                        .put("kind", e[1]).put("detail", e[2]);
                w.write(JSON.writeValueAsString(o));
                w.newLine();
            }
            for (Op op : ops) {
                w.write(JSON.writeValueAsString(JSON.valueToTree(op).deepCopy()));
                w.newLine();
            }
            for (var list : observations.values()) {
                for (Observation ob : list) {
                    w.write(JSON.writeValueAsString(JSON.valueToTree(ob)));
                    w.newLine();
                }
            }
        }
    }
}
