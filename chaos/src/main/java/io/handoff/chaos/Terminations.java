package io.handoff.chaos;

import java.util.List;
import java.util.Set;

/**
 * What the calls in flight on a replica saw when it was stopped with SIGTERM. A graceful stop lets them end as they
 * would have (finished, or refused with a code: DRAINING for work that arrived after the signal) and cuts none: no
 * stream that stops without its end, no call failed by a closed connection. A run with {@code replica-term} must
 * have stopped a replica, with calls in flight: else it proved nothing of the stop, and fails.
 */
final class Terminations {

    /** Outcomes of a call that the connection's end cut (no answer of the gateway's own). */
    private static final Set<String> TRANSPORT_FAILURES = Set.of("status:UNAVAILABLE", "status:INTERNAL",
            "status:UNKNOWN", "status:CANCELLED", "io-error", "ended-without-finish");

    private Terminations() {
    }

    /** {@code signalled}: whether the run's faults include {@code replica-term}, so that a stop must have happened. */
    static void check(History history, Replicas replicas, boolean signalled, Verdict v) {
        List<Replicas.Termination> terms = replicas.terminations();
        long inFlight = 0;
        long cut = 0;
        long finished = 0;
        long overran = 0;
        long longestExit = 0;
        for (Replicas.Termination t : terms) {
            overran += t.overran() ? 1 : 0;
            longestExit = Math.max(longestExit, t.exitedAtMs() - t.signalledAtMs());
            for (History.Op op : history.ops()) {
                if (!op.replica().equals(t.replicaId()) || op.startMs() > t.signalledAtMs()
                        || op.endMs() < t.signalledAtMs()) {
                    continue;
                }
                inFlight++;
                if (op.outcome().equals("finished") || op.outcome().equals("http-200-done")) {
                    finished++;
                }
                if (isCut(op)) {
                    cut++;
                    v.note("cut by a SIGTERM: " + op.kind() + " " + op.key() + " on " + op.replica() + ": "
                            + op.outcome() + " " + op.detail());
                }
            }
        }
        if (signalled) {
            v.mustAtLeast("replicas stopped with SIGTERM", 1, terms.size());
        } else {
            v.figure("replicas stopped with SIGTERM", terms.size());
        }
        v.figure("  longest exit after SIGTERM (ms)", longestExit);
        if (signalled) {
            v.mustAtLeast("  calls in flight at their SIGTERM", 1, inFlight);
        } else {
            v.figure("  calls in flight at their SIGTERM", inFlight);
        }
        v.figure("  of them streams that finished", finished);
        v.must("calls cut by a graceful stop (no end of their own)", 0, cut);
        v.must("replicas that overran their stop (killed)", 0, overran);
    }

    private static boolean isCut(History.Op op) {
        if (op.kind().equals("http-stream") && op.outcome().equals("http-200")) {
            return true; // a stream whose [DONE] never came
        }
        return TRANSPORT_FAILURES.contains(op.outcome()) && !op.detail().startsWith("ERROR_CODE_");
    }
}
