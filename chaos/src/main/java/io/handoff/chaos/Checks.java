package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.KvSession;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The end of a run, with the faults stopped: waits until what nobody released must be gone (lease, cleanup claim,
 * engine hold, grace), reads every session and idempotency key back through the gateway, reads every engine's
 * counters, and checks the history.
 */
final class Checks {

    static final Set<String> TERMINAL = Set.of("KV_SESSION_STATE_COMPLETE", "KV_SESSION_STATE_BYPASSED",
            "KV_SESSION_STATE_REJECTED", "KV_SESSION_STATE_CANCELLED", "KV_SESSION_STATE_FAILED",
            "KV_SESSION_STATE_RELEASED", "KV_SESSION_STATE_EXPIRED");

    private final ChaosSettings settings;
    private final Replicas replicas;
    private final SimulatorFleet fleet;
    private final HttpCalls http;
    private final History history;
    private final KvCalls kv;
    private final Instant loadEndedAt;
    /** The sessions the load was answered, before the final reads added their own observations. */
    private final Set<String> knownBefore;

    Checks(ChaosSettings settings, Replicas replicas, SimulatorFleet fleet, HttpCalls http, History history,
            Instant loadEndedAt) {
        this.loadEndedAt = loadEndedAt;
        this.knownBefore = Set.copyOf(history.observations().keySet());
        this.settings = settings;
        this.replicas = replicas;
        this.fleet = fleet;
        this.http = http;
        this.history = history;
        this.kv = new KvCalls(history);
    }

    /** Waits for the deployment to settle (or for {@code settleMs}), then measures. */
    void settleAndCheck(Verdict v) throws Exception {
        long start = System.currentTimeMillis();
        long deadline = start + settings.settleMs();
        while (System.currentTimeMillis() < deadline && !settled()) {
            Sleep.millis(250);
        }
        v.figure("settled after load stopped (ms)", System.currentTimeMillis() - start);
        long leaked = checkSessions(v) + checkKeys(v);
        v.must("sessions leaked: live past lease + grace", 0, leaked);
        v.must("resurrections: a session that moved after it was seen terminal", 0, resurrections(v));
        v.must("writes accepted on a stale epoch", 0, staleWrites(v));
        checkStore(v);
        checkEngines(v);
    }

    private boolean settled() {
        try {
            JsonNode p = http.drainProgress(replicas.anyUp());
            if (p.path("live").asLong(-1) != 0 || p.path("engine_held").asLong(-1) != 0) {
                return false;
            }
            for (SimulatorFleet.Engine e : fleet.engines()) {
                if (http.simStats(e.url()).path("kv_sessions_pinned_now").asLong(-1) != 0) {
                    return false;
                }
            }
            return true;
        } catch (Exception notYet) {
            return false;
        }
    }

    /** Every session a client was told of: read back; none may be live, none may be gone. Answers the leaked. */
    private long checkSessions(Verdict v) {
        long leaked = 0;
        long lost = 0;
        long lostByWipe = 0;
        long lostByMasterKill = 0;
        for (String id : new ArrayList<>(history.observations().keySet())) {
            long firstInvoked = history.observations().get(id).stream()
                    .mapToLong(History.Observation::invokedNs).min().orElseThrow();
            KvSession s = withRetry(() -> kv.get(replicas.anyUp(), id, 5000));
            History.StoreLoss loss = s == null ? lossBetween(firstInvoked, Long.MAX_VALUE, false) : null;
            if (loss != null && loss.partial()) {
                lostByMasterKill++; // created before a master died: its replica may never have had it
            } else if (loss != null) {
                lostByWipe++; // created before the store was emptied: gone with everything else
            } else if (s == null) {
                lost++;
            } else if (!TERMINAL.contains(s.getState().name())) {
                leaked++;
                v.note("leaked: session " + id + " is " + s.getState() + " at epoch " + s.getEpoch());
            }
        }
        v.figure("sessions a client was answered (participant and raw)", history.observations().size());
        v.figure("sessions lost with the store's writes: by a wipe or an empty restart", lostByWipe);
        v.figure("sessions lost with the store's writes: by a master's kill", lostByMasterKill);
        v.must("sessions acknowledged then lost (not found)", 0, lost);
        return leaked;
    }

    /**
     * A terminal observation answered at time a fixes the session: any observation of a call invoked after a must
     * show the same terminal state.
     */
    private long resurrections(Verdict v) {
        long count = 0;
        long explained = 0;
        for (var entry : history.observations().entrySet()) {
            List<History.Observation> obs = new ArrayList<>(entry.getValue());
            obs.sort(Comparator.comparingLong(History.Observation::invokedNs));
            History.Observation firstTerminal = null;
            for (History.Observation o : obs) {
                if (TERMINAL.contains(o.state()) && (firstTerminal == null
                        || o.answeredNs() < firstTerminal.answeredNs())) {
                    firstTerminal = o;
                }
            }
            if (firstTerminal == null) {
                continue;
            }
            for (History.Observation o : obs) {
                if (o.invokedNs() > firstTerminal.answeredNs() && !o.state().equals(firstTerminal.state())) {
                    History.StoreLoss loss = lossBetween(firstTerminal.invokedNs(), o.answeredNs(), true);
                    if (loss != null) {
                        explained++;
                    } else {
                        count++;
                    }
                    v.note((loss != null ? "after a " + loss.kind() + ", " : "") + "resurrection: session " + entry.getKey() + " was " + firstTerminal.state() + " (epoch "
                            + firstTerminal.epoch() + ", via " + firstTerminal.via() + "), later " + o.state()
                            + " (epoch " + o.epoch() + ", via " + o.via() + ")");
                    break;
                }
            }
        }
        v.figure("  sessions back in an older state after a master's kill lost writes", explained);
        return count;
    }

    /**
     * A write (renew, release) answered with the session at an epoch older than one an earlier answer (answered
     * before this write was sent) had already shown: the store took a write against a state it had moved past. Every
     * transition raises the epoch, so with nothing acknowledged lost (Redis syncs every write) this must never
     * happen; a stale write that moved an ended session is also a resurrection, this counts every one. A master's
     * kill can take the newer epoch itself (asynchronous replication): a write answered at the older epoch after
     * that is counted apart, as what the store lost, not what it accepted wrongly.
     */
    private long staleWrites(Verdict v) {
        long count = 0;
        long explained = 0;
        for (var entry : history.observations().entrySet()) {
            List<History.Observation> obs = new ArrayList<>(entry.getValue());
            for (History.Observation w : obs) {
                if (!w.via().equals("renew") && !w.via().equals("release")) {
                    continue;
                }
                for (History.Observation earlier : obs) {
                    if (earlier.answeredNs() < w.invokedNs() && earlier.epoch() > w.epoch()) {
                        History.StoreLoss loss = lossBetween(earlier.invokedNs(), w.answeredNs(), true);
                        if (loss != null) {
                            explained++;
                        } else {
                            count++;
                        }
                        v.note((loss != null ? "after a " + loss.kind() + ", " : "") + "stale write: session " + entry.getKey() + " " + w.via() + " answered epoch "
                                + w.epoch() + " (" + w.state() + ") after epoch " + earlier.epoch() + " ("
                                + earlier.state() + ", via " + earlier.via() + ") was acknowledged");
                        break;
                    }
                }
            }
        }
        v.figure("  writes at an older epoch after a master's kill lost the newer one", explained);
        return count;
    }

    /**
     * A loss of acknowledged writes the harness injected that overlaps {@code fromNs} to {@code toNs}, or null. With
     * {@code partialOnly}, only one that can leave an older state behind (a master's kill); a wipe leaves nothing.
     */
    private History.StoreLoss lossBetween(long fromNs, long toNs, boolean partialOnly) {
        for (History.StoreLoss loss : history.storeLosses()) {
            if (loss.endNs() > fromNs && loss.startNs() < toNs && (!partialOnly || loss.partial())) {
                return loss;
            }
        }
        return null;
    }

    /**
     * Whether every change of session among a key's answers (in the order they came) follows a loss of the store's
     * writes: the earlier session's reservation of the key was lost, so a retry made a new one.
     */
    private boolean splitByLoss(String key) {
        List<History.KeyAnswer> answers = new ArrayList<>(history.keyAnswers().getOrDefault(key,
                new ConcurrentLinkedQueue<>()));
        answers.sort(Comparator.comparingLong(History.KeyAnswer::answeredNs));
        long sessionSince = Long.MAX_VALUE;
        String current = null;
        for (History.KeyAnswer a : answers) {
            if (current == null || !current.equals(a.session())) {
                if (current != null && lossBetween(sessionSince, a.answeredNs(), false) == null) {
                    return false;
                }
                current = a.session();
                sessionSince = a.invokedNs();
            }
            sessionSince = Math.min(sessionSince, a.invokedNs());
        }
        return true;
    }

    /**
     * Every idempotency key used: the identical allocation once more must name the one session every earlier
     * answer named. A key whose every answer was dropped may have made a session nobody heard of: this read finds
     * it, and it must not be live either. A session this read made itself (none was made before) is released.
     * Answers the leaked sessions only this read found.
     */
    private long checkKeys(Verdict v) {
        long keys = 0;
        long split = 0;
        long splitByLoss = 0;
        long leaked = 0;
        for (Map.Entry<String, String> k : history.keys().entrySet()) {
            String[] parts = k.getValue().split("\t");
            var req = KvCalls.allocation(parts[0], parts[1], k.getKey(), Long.parseLong(parts[2]));
            KvSession s = withRetry(() -> kv.allocate(replicas.anyUp(), req, 5000));
            keys++;
            if (s != null && !TERMINAL.contains(s.getState().name())) {
                Instant created = Instant.ofEpochSecond(s.getCreatedAt().getSeconds(), s.getCreatedAt().getNanos());
                if (created.isAfter(loadEndedAt)) {
                    withRetry(() -> kv.release(replicas.anyUp(), s.getRef().getSessionId(), 5000));
                } else if (!knownBefore.contains(s.getRef().getSessionId())) { // a known one was counted already
                    leaked++;
                    v.note("leaked: session " + s.getRef().getSessionId() + " of key " + k.getKey() + " is "
                            + s.getState() + ", found only by its key");
                }
            }
            Set<String> sessions = history.sessionsByKey().getOrDefault(k.getKey(), new HashSet<>());
            if (sessions.size() > 1 && splitByLoss(k.getKey())) {
                splitByLoss++;
            } else if (sessions.size() > 1) {
                split++;
                v.note("idempotency: key " + k.getKey() + " named " + sessions);
            }
        }
        v.figure("idempotency keys used", keys);
        v.figure("idempotency keys whose session was lost with the store, then made again", splitByLoss);
        v.must("idempotency keys naming more than one session", 0, split);
        return leaked;
    }

    /** The store's own count of what is live and what engines may still hold, over every replica. */
    private void checkStore(Verdict v) throws Exception {
        JsonNode p = http.drainProgress(replicas.anyUp());
        v.must("live sessions in the store (every Generate's included)", 0, p.path("live").asLong(-1));
        v.must("ended sessions an engine may still hold KV for", 0, p.path("engine_held").asLong(-1));
    }

    /** Each engine: nothing pinned, nothing leaked, every hold ended exactly once. */
    private void checkEngines(Verdict v) throws Exception {
        long pinnedNow = 0;
        long leaked = 0;
        long pinnedTotal = 0;
        long endedTotal = 0;
        long unbalanced = 0;
        long pulls = 0;
        long aborts = 0;
        long timeouts = 0;
        long failures = 0;
        long crashes = 0;
        long corrupt = 0;
        Map<String, JsonNode> statsByEngine = new LinkedHashMap<>();
        for (SimulatorFleet.Engine e : fleet.engines()) {
            JsonNode s = http.simStats(e.url());
            statsByEngine.put(e.name(), s);
            pinnedNow += s.path("kv_sessions_pinned_now").asLong();
            leaked += s.path("leaked_total").asLong();
            long pinned = s.path("kv_holds_pinned_total").asLong();
            long ended = s.path("kv_holds_ended_total").asLong();
            pinnedTotal += pinned;
            endedTotal += ended;
            if (pinned != ended + s.path("kv_sessions_pinned_now").asLong()) {
                unbalanced++;
            }
            pulls += s.path("freed_by_pull").asLong();
            aborts += s.path("freed_by_abort").asLong();
            timeouts += s.path("freed_by_timeout").asLong();
            failures += s.path("freed_by_failure").asLong();
            crashes += s.path("crashes").asLong();
            corrupt += s.path("corrupt_kv_reads").asLong();
            v.note(String.format("engine %-18s holds %5d, pulled %5d, aborted %4d, timed out %4d, failed %3d,"
                    + " pinned now %d, crashes %d", e.name(), pinned, s.path("freed_by_pull").asLong(),
                    s.path("freed_by_abort").asLong(), s.path("freed_by_timeout").asLong(),
                    s.path("freed_by_failure").asLong(), s.path("kv_sessions_pinned_now").asLong(),
                    s.path("crashes").asLong()));
        }
        v.figure("KV holds pinned on the engines", pinnedTotal);
        v.figure("  freed by a pull", pulls);
        v.figure("  freed by an abort (a discharge or a cancelled leg)", aborts);
        v.figure("  freed by the engine's own timer", timeouts);
        v.figure("  freed by a failure", failures);
        v.figure("engine crashes", crashes);
        v.must("KV holds ended other than exactly once (per engine)", 0, unbalanced);
        v.must("KV holds ended, against pinned", pinnedTotal, endedTotal);
        v.must("KV pinned on the engines at the end", 0, pinnedNow);
        v.must("KV holds leaked by an engine (past its own timer)", 0, leaked);
        RepeatedDischarges.Count repeats = RepeatedDischarges.count(statsByEngine, history);
        v.figure("native aborts the engines received (per id: discharges, cancelled legs)",
                statsByEngine.values().stream().mapToLong(s -> s.path("aborts_total").asLong()).sum());
        v.figure("  KV discharged again after a loss of the store's writes", repeats.afterLoss());
        v.figure("  KV discharged again after a replica died between the engine's answer and its record",
                repeats.afterDeath());
        v.must("KV discharged more than once (an id aborted again, nothing excusing it)", 0, repeats.unexcused());
        repeats.lines().forEach(v::note);
        v.figure("decodes that read lost or recycled KV (corrupt_kv_reads)", corrupt);
        CancelPhases.check(statsByEngine, v);
    }

    private interface Read {
        KvSession run();
    }

    /** A read at the end: retried while a replica restarts or Redis comes back; NOT_FOUND answers null. */
    private static KvSession withRetry(Read read) {
        StatusRuntimeException last = null;
        for (int i = 0; i < 20; i++) {
            try {
                return read.run();
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                    return null;
                }
                last = e;
                Sleep.millis(250);
            }
        }
        throw new IllegalStateException("the final read kept failing", last);
    }
}
