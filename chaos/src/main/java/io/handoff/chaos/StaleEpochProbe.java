package io.handoff.chaos;

import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvSession;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Ties the stale-epoch check to a replica's SIGSTOP. Before the stop, a participant session is allocated on the
 * victim and its prefill leg started there, on a vLLM prefill engine made to wait {@value #ENGINE_WAIT_MS} ms before
 * it looks at a request: the victim has read the session and sent the prefill when it is stopped. While it is
 * stopped, another replica releases the session (RELEASED, a newer epoch). After SIGCONT the victim has the engine's
 * answer and writes the session READY at the epoch it read: that write must be refused, the leg must end with an
 * error and no PrefillReady, and the session, read back through another replica, must still be RELEASED at the
 * epoch the release answered. A pause whose release did not get through makes no probe, and counts against "every
 * pause has a probe".
 */
final class StaleEpochProbe implements Replicas.PauseHooks {

    /** How long the probe's prefill engine waits before it looks at a request: well past the stop's start. */
    static final long ENGINE_WAIT_MS = 2000;
    /** How long after starting the leg the victim is stopped: time to read the session and send the prefill. */
    private static final long LEG_HEAD_START_MS = 400;
    private static final long CALL_DEADLINE_MS = 20_000;
    private static final String FAMILY = "vllm";

    /** One pause's probe, from the allocation to the victim's answer. */
    private static final class Probe {
        String session;
        Thread leg;
        final AtomicReference<GenerateCalls.Result> legResult = new AtomicReference<>();
        KvSession released;
    }

    private final ChaosSettings settings;
    private final Replicas replicas;
    private final SimulatorFleet fleet;
    private final HttpCalls http;
    private final History history;
    private final KvCalls kv;
    private final GenerateCalls generate;
    private volatile Probe current;

    private final AtomicLong pauses = new AtomicLong();
    private final AtomicLong probes = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong unresolved = new AtomicLong();

    StaleEpochProbe(ChaosSettings settings, Replicas replicas, SimulatorFleet fleet, HttpCalls http, History history) {
        this.settings = settings;
        this.replicas = replicas;
        this.fleet = fleet;
        this.http = http;
        this.history = history;
        this.kv = new KvCalls(history);
        this.generate = new GenerateCalls(history);
    }

    @Override
    public void beforePause(Replicas.Target victim) {
        pauses.incrementAndGet();
        current = null;
        Probe p = new Probe();
        String requestId = "stale-" + UUID.randomUUID();
        String key = "key-" + requestId;
        String model = "chaos-" + FAMILY;
        history.keyUsed(key, requestId + "\t" + model + "\t" + settings.leaseMs());
        try {
            p.session = kv.allocate(victim, KvCalls.allocation(requestId, model, key, settings.leaseMs()),
                    CALL_DEADLINE_MS).getRef().getSessionId();
        } catch (StatusRuntimeException e) {
            history.event("stale-epoch-probe", "no probe: the allocation on " + victim.replicaId() + " failed: "
                    + KvCalls.code(e));
            return;
        }
        slowPrefillEngine("{\"latency_ms\":" + ENGINE_WAIT_MS + "}");
        GenerateRequest req = GenerateCalls.request(requestId, model, 8, null);
        p.leg = new Thread(() -> p.legResult.set(generate.generate(victim, req, "stale-epoch-prefill", "prefill",
                p.session, 0, CALL_DEADLINE_MS)), "chaos-stale-epoch-leg");
        p.leg.setDaemon(true);
        p.leg.start();
        Sleep.millis(LEG_HEAD_START_MS);
        current = p;
    }

    @Override
    public void whilePaused(Replicas.Target victim) {
        Probe p = current;
        if (p == null) {
            return;
        }
        // the victim is not UP: anyUp is another replica
        long until = System.currentTimeMillis() + settings.pauseMs() / 2;
        while (p.released == null && System.currentTimeMillis() < until) {
            try {
                p.released = kv.release(replicas.anyUp(), p.session, 1000);
            } catch (StatusRuntimeException e) {
                Sleep.millis(100); // a replica restarting, Redis away: tried again within half the pause
            }
        }
        slowPrefillEngine(null); // the probe's request already waits on its timer; the load's need not
    }

    @Override
    public void afterResume(Replicas.Target victim) {
        Probe p = current;
        current = null;
        if (p == null) {
            return;
        }
        if (p.released == null) {
            history.event("stale-epoch-probe", "no probe: session " + p.session + " could not be released during"
                    + " the pause of " + victim.replicaId());
            joinLeg(p);
            return;
        }
        joinLeg(p);
        GenerateCalls.Result leg = p.legResult.get();
        KvSession after = null;
        for (int i = 0; i < 20 && after == null; i++) {
            try {
                after = kv.get(replicas.anyUp(), p.session, 2000);
            } catch (StatusRuntimeException e) {
                Sleep.millis(250);
            }
        }
        probes.incrementAndGet();
        String outcome = leg == null ? "no answer" : leg.outcome() + (leg.finish().isEmpty() ? "" : " (" + leg.finish()
                .trim() + ")");
        boolean moved = after != null && (after.getState() != p.released.getState()
                || after.getEpoch() != p.released.getEpoch());
        boolean wrote = leg != null && leg.prefillReady() != null;
        String verdict;
        if (wrote || moved) {
            accepted.incrementAndGet();
            verdict = "ACCEPTED";
        } else if (leg != null && refusal(leg.outcome())) {
            refused.incrementAndGet();
            verdict = "refused";
        } else {
            unresolved.incrementAndGet();
            verdict = "unresolved";
        }
        history.event("stale-epoch-probe", verdict + ": session " + p.session + " released at epoch "
                + p.released.getEpoch() + " while " + victim.replicaId() + " was stopped; its prefill leg ended "
                + outcome + "; read back " + (after == null ? "not at all" : after.getState() + " at epoch "
                + after.getEpoch()));
    }

    /**
     * A leg that ended without PrefillReady, by the gateway's own doing: a status (not the client's deadline or
     * cancel), an EngineError, or a GenerationFinished (the woken replica ended the leg instead of parking it).
     */
    private static boolean refusal(String outcome) {
        return outcome.startsWith("status:") && !outcome.contains("DEADLINE_EXCEEDED") && !outcome.contains("CANCELLED")
                || outcome.startsWith("engine-error") || outcome.equals("finished");
    }

    private void joinLeg(Probe p) {
        try {
            p.leg.join(CALL_DEADLINE_MS + 5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sets (or with null clears) the probe family's prefill engine's faults. */
    private void slowPrefillEngine(String json) {
        SimulatorFleet.Engine e = fleet.get(FAMILY, "prefill");
        try {
            http.simFaults(e.url(), json);
        } catch (IOException ex) {
            history.event("fault-failed", "stale-epoch probe, faults of " + e.name() + ": " + ex.getMessage());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The probe's figures: one probe per pause, none of the woken replicas' writes accepted. */
    void check(Verdict v) {
        v.figure("replica pauses (SIGSTOP past a lease)", pauses.get());
        v.figure("stale-epoch probes: a write the woken replica attempts", probes.get());
        v.figure("  refused", refused.get());
        v.figure("  unresolved (no answer to the leg)", unresolved.get());
        v.must("  accepted (the leg went on, or the session moved)", 0, accepted.get());
        v.must("replica pauses without a stale-epoch probe", 0, pauses.get() - probes.get());
    }
}
