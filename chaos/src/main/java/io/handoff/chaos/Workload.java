package io.handoff.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.StatusRuntimeException;
import io.handoff.openengine.v1.AllocateKvSessionRequest;
import io.handoff.openengine.v1.GenerateRequest;
import io.handoff.openengine.v1.KvScheduleStyle;
import io.handoff.openengine.v1.KvSession;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One client operation at a time, chosen at random: an orchestrated Generate over HTTP (plain or streamed) or gRPC
 * in every style each family supports, a participant's session and legs, or a raw allocation retried with the same
 * idempotency key, the answers of its first attempts dropped. Clients give up at several phases.
 */
final class Workload {

    /** A family and a style it supports natively. */
    record Flow(String family, KvScheduleStyle style) {
        /** The family's route: its default style, and every style a gRPC request may name. */
        String model() {
            return "chaos-" + family;
        }

        boolean isDefaultStyle() {
            return DEFAULT_STYLES.get(family) == style;
        }

        /** The route whose default this style is (HTTP cannot name a style): the family's own, or one of its own. */
        String route() {
            return isDefaultStyle() ? family : family + "-" + styleName(style);
        }

        String httpModel() {
            return "chaos-" + route();
        }
    }

    /** Each family route's default style (see {@link ChaosSettings#gatewayConfig}). */
    static final Map<String, KvScheduleStyle> DEFAULT_STYLES = Map.of(
            "vllm", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST,
            "sglang", KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT,
            "trtllm", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST,
            "openengine", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST);

    /** Every style each family supports: gRPC names it in the request, HTTP picks the route whose default it is. */
    static final List<Flow> FLOWS = List.of(
            new Flow("vllm", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST),
            new Flow("sglang", KvScheduleStyle.KV_SCHEDULE_STYLE_CONCURRENT),
            new Flow("sglang", KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST),
            new Flow("trtllm", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST),
            new Flow("trtllm", KvScheduleStyle.KV_SCHEDULE_STYLE_GENERATION_FIRST),
            new Flow("openengine", KvScheduleStyle.KV_SCHEDULE_STYLE_CONTEXT_FIRST));

    /** Participants drive context-first legs themselves. */
    static final List<String> PARTICIPANT_FAMILIES = List.of("vllm", "trtllm", "openengine");

    private static final long CALL_DEADLINE_MS = 15_000;
    /** Steps of {@link #reachEveryCancelPhase}'s sweep: a client's patience of 5 ms to 300 ms. */
    private static final int SWEEP_STEPS = 60;

    private final Replicas replicas;
    private final History history;
    private final ChaosSettings settings;
    private final KvCalls kv;
    private final GenerateCalls generate;
    private final HttpCalls http;

    Workload(Replicas replicas, History history, ChaosSettings settings, HttpCalls http) {
        this.replicas = replicas;
        this.history = history;
        this.settings = settings;
        this.kv = new KvCalls(history);
        this.generate = new GenerateCalls(history);
        this.http = http;
    }

    /** Runs one operation; answers false when no replica could be reached (nothing was started). */
    boolean runOne() {
        Optional<Replicas.Target> target = replicas.pick();
        if (target.isEmpty()) {
            Sleep.millis(50);
            return false;
        }
        Replicas.Target t = target.get();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int dice = rnd.nextInt(100);
        if (dice < 25) {
            httpCompletion(t, rnd);
        } else if (dice < 55) {
            grpcGenerate(t, rnd);
        } else if (dice < 80) {
            participant(t, rnd);
        } else {
            rawAllocation(rnd);
        }
        return true;
    }

    private void httpCompletion(Replicas.Target t, ThreadLocalRandom rnd) {
        Flow flow = FLOWS.get(rnd.nextInt(FLOWS.size()));
        boolean stream = rnd.nextBoolean();
        int phase = rnd.nextInt(10);
        long timeout = phase < 2 ? 5 + rnd.nextInt(60) : CALL_DEADLINE_MS; // gives up before or during the prefill
        int cancelAfterLines = stream && phase >= 8 ? 1 + rnd.nextInt(3) : 0; // gives up mid-stream
        http.completion(t, "http-" + UUID.randomUUID(), flow.httpModel(), tokens(rnd), stream, timeout,
                cancelAfterLines);
    }

    private void grpcGenerate(Replicas.Target t, ThreadLocalRandom rnd) {
        Flow flow = FLOWS.get(rnd.nextInt(FLOWS.size()));
        int phase = rnd.nextInt(10);
        int cancelAfter = phase >= 8 ? 1 + rnd.nextInt(3) : 0;
        long deadline = phase < 2 ? 10 + rnd.nextInt(150) : CALL_DEADLINE_MS;
        GenerateRequest req = GenerateCalls.request("grpc-" + UUID.randomUUID(), flow.model(), tokens(rnd),
                flow.style());
        generate.generate(t, req, "generate-" + flow.family() + "-" + styleName(flow.style()), null, null,
                cancelAfter, deadline);
    }

    /**
     * After the load: completions given up at a sweep of moments, until the engines have counted a cancel in every
     * phase of a handoff ({@link CancelPhases}); answers how many calls that took. The load gives up at random
     * moments, so a short run could leave a phase with no cancel in it by chance (a run of 98 sessions once did), and
     * the check would fail for the dice, not for the gateway. From 5 ms up, 5 ms a step, the sweep passes through the
     * prefill (10 ms) and the transfer before the first token (15 ms) whatever the machine's pace; a phase still
     * uncounted at its end is one the gateway's cancels do not reach, which the check then reports.
     */
    int reachEveryCancelPhase(SimulatorFleet fleet) {
        int calls = 0;
        for (String phase : CancelPhases.COUNTERS) {
            boolean midStream = phase.equals(CancelPhases.MID_STREAM);
            long counted = cancels(fleet, phase);
            for (int step = 1; step <= SWEEP_STEPS && counted == 0; step++) {
                Optional<Replicas.Target> t = replicas.pick();
                if (t.isEmpty()) {
                    Sleep.millis(50);
                    continue;
                }
                Flow flow = FLOWS.get(step % FLOWS.size());
                String id = "phase-" + UUID.randomUUID();
                if (midStream) {
                    http.completion(t.get(), id, flow.httpModel(), 16, true, CALL_DEADLINE_MS, 1 + step % 3);
                } else {
                    http.completion(t.get(), id, flow.httpModel(), 16, false, 5L * step, 0);
                }
                calls++;
                counted = awaitCancels(fleet, phase);
            }
        }
        return calls;
    }

    /**
     * The phase's cancels once the engines have seen the last call's, or after a second if they saw none; -1 when
     * this thread was interrupted.
     */
    private long awaitCancels(SimulatorFleet fleet, String phase) {
        long deadline = System.currentTimeMillis() + 1000;
        long n = cancels(fleet, phase);
        while (n == 0 && System.currentTimeMillis() < deadline && !Thread.currentThread().isInterrupted()) {
            Sleep.millis(20);
            n = cancels(fleet, phase);
        }
        return n;
    }

    private long cancels(SimulatorFleet fleet, String phase) {
        Map<String, JsonNode> stats = new LinkedHashMap<>();
        for (SimulatorFleet.Engine engine : fleet.engines()) {
            try {
                stats.put(engine.name(), http.simStats(engine.url()));
            } catch (IOException e) {
                return 0; // an engine that does not answer now is read again on the next step
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
        return CancelPhases.count(stats).total().get(phase);
    }

    /**
     * A framework's session: allocate (context-first), then one of: both legs to the end; the prefill leg then a
     * release (the decode abandoned); the prefill leg cancelled by the client; renewals then a release; nothing
     * more (left to expire). The session's id goes in the history for the final read.
     */
    private void participant(Replicas.Target t, ThreadLocalRandom rnd) {
        String family = PARTICIPANT_FAMILIES.get(rnd.nextInt(PARTICIPANT_FAMILIES.size()));
        String requestId = "part-" + UUID.randomUUID();
        String key = "key-" + requestId;
        String model = "chaos-" + family;
        AllocateKvSessionRequest alloc = KvCalls.allocation(requestId, model, key, settings.leaseMs());
        history.keyUsed(key, requestId + "\t" + model + "\t" + settings.leaseMs());
        KvSession s;
        try {
            s = kv.allocate(t, alloc, CALL_DEADLINE_MS);
        } catch (StatusRuntimeException e) {
            return; // unanswered: the key's final read finds what, if anything, was made
        }
        String id = s.getRef().getSessionId();
        try {
            int variant = rnd.nextInt(10);
            GenerateRequest base = GenerateCalls.request(requestId, model, tokens(rnd), null);
            if (variant < 5) {
                GenerateCalls.Result pre = generate.generate(t, base, "participant-prefill", "prefill", id, 0,
                        CALL_DEADLINE_MS);
                if (pre.prefillReady() != null) {
                    Replicas.Target d = replicas.pick().orElse(t); // the decode leg may go to another replica
                    generate.generate(d, GenerateCalls.decodeLeg(base, pre.prefillReady()), "participant-decode",
                            "decode", null, rnd.nextInt(8) == 0 ? 1 : 0, CALL_DEADLINE_MS);
                }
                kv.get(t, id, CALL_DEADLINE_MS);
                kv.release(t, id, CALL_DEADLINE_MS);
            } else if (variant < 6) {
                generate.generate(t, base, "participant-prefill", "prefill", id, 0, CALL_DEADLINE_MS);
                kv.release(replicas.pick().orElse(t), id, CALL_DEADLINE_MS);
            } else if (variant < 7) {
                generate.generate(t, base, "participant-prefill-cancelled", "prefill", id, 0, 5 + rnd.nextInt(80));
            } else if (variant < 9) {
                kv.renew(t, id, settings.leaseMs(), CALL_DEADLINE_MS);
                kv.renew(replicas.pick().orElse(t), id, settings.leaseMs(), CALL_DEADLINE_MS);
                kv.release(t, id, CALL_DEADLINE_MS);
            }
            // else: abandoned, left to its lease
        } catch (StatusRuntimeException e) {
            // recorded; the session is read back at the end whatever happened here
        }
    }

    /**
     * AllocateKvSession under one idempotency key, retried up to 8 times: the first attempts' answers are dropped
     * (a deadline of a few milliseconds), as a client behind a lossy network sees them; the last one waits. Then a
     * release, renewals and a release, or nothing (left to expire).
     */
    private void rawAllocation(ThreadLocalRandom rnd) {
        String requestId = "raw-" + UUID.randomUUID();
        String key = "key-" + requestId;
        String model = "chaos-" + SimulatorFleet.FAMILIES.get(rnd.nextInt(SimulatorFleet.FAMILIES.size()));
        AllocateKvSessionRequest alloc = KvCalls.allocation(requestId, model, key, settings.leaseMs());
        history.keyUsed(key, requestId + "\t" + model + "\t" + settings.leaseMs());
        int dropped = rnd.nextInt(8);
        KvSession s = null;
        for (int attempt = 1; attempt <= 8 && s == null; attempt++) {
            Optional<Replicas.Target> t = replicas.pick();
            if (t.isEmpty()) {
                Sleep.millis(50);
                continue;
            }
            long deadline = attempt <= dropped ? 1 + rnd.nextInt(15) : CALL_DEADLINE_MS;
            try {
                s = kv.allocate(t.get(), alloc, deadline);
            } catch (StatusRuntimeException e) {
                // dropped or refused (UNAVAILABLE while Redis is away): retried with the same key
            }
        }
        if (s == null) {
            return;
        }
        String id = s.getRef().getSessionId();
        int variant = rnd.nextInt(3);
        try {
            if (variant == 0) {
                kv.release(replicas.pick().orElseThrow(), id, CALL_DEADLINE_MS);
            } else if (variant == 1) {
                kv.renew(replicas.pick().orElseThrow(), id, settings.leaseMs(), CALL_DEADLINE_MS);
                kv.release(replicas.pick().orElseThrow(), id, CALL_DEADLINE_MS);
            }
        } catch (StatusRuntimeException | NoSuchElementException e) {
            // recorded; read back at the end
        }
    }

    private static int tokens(ThreadLocalRandom rnd) {
        return 4 + rnd.nextInt(16);
    }

    static String styleName(KvScheduleStyle style) {
        return style.name().substring("KV_SCHEDULE_STYLE_".length()).toLowerCase(Locale.ROOT)
                .replace('_', '-');
    }
}
