package io.handoff.gateway.testing;

import io.handoff.simulator.SimClock;
import io.handoff.simulator.SimEngine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The simulated engines of one family on one shared clock: the prefill and decode the routes use, any further
 * decode endpoints, and an aggregated engine (in no route) that gives the reference answers.
 */
public final class FamilyEngines {

    private final String family;
    private final SimClock clock;
    private final SimEngine prefill;
    private final List<SimEngine> extraPrefills;
    private final SimEngine decode;
    private final List<SimEngine> extraDecodes;
    private final SimEngine aggregated;

    FamilyEngines(String family, SimClock clock, SimEngine prefill, List<SimEngine> extraPrefills, SimEngine decode,
            List<SimEngine> extraDecodes, SimEngine aggregated) {
        this.family = family;
        this.clock = clock;
        this.prefill = prefill;
        this.extraPrefills = List.copyOf(extraPrefills);
        this.decode = decode;
        this.extraDecodes = List.copyOf(extraDecodes);
        this.aggregated = aggregated;
    }

    public String family() {
        return family;
    }

    public SimEngine prefill() {
        return prefill;
    }

    public SimEngine decode() {
        return decode;
    }

    /** The second prefill endpoint (vLLM only), for endpoint choice among prefills. */
    public SimEngine secondPrefill() {
        if (extraPrefills.isEmpty()) {
            throw new IllegalStateException(family + " has no second prefill endpoint");
        }
        return extraPrefills.get(0);
    }

    /** The second decode endpoint (vLLM only), for retry-elsewhere. */
    public SimEngine secondDecode() {
        if (extraDecodes.isEmpty()) {
            throw new IllegalStateException(family + " has no second decode endpoint");
        }
        return extraDecodes.get(0);
    }

    public SimEngine aggregated() {
        return aggregated;
    }

    /** The engines routes send requests to (not the aggregated reference engine). */
    public List<SimEngine> routed() {
        List<SimEngine> all = new ArrayList<>(List.of(prefill, decode));
        all.addAll(extraPrefills);
        all.addAll(extraDecodes);
        return all;
    }

    /** KV blocks pinned now over the routed engines. */
    public long pinnedBlocks() {
        return routed().stream().filter(SimEngine::isUp).mapToLong(e -> e.stat("kv_blocks_pinned_now")).sum();
    }

    /** Requests the routed engines received so far. */
    public long requestsTotal() {
        return routed().stream().mapToLong(e -> e.stat("requests_total")).sum();
    }

    /** Moves the family's shared clock, which makes every engine on it sweep the holds that ran out. */
    public void advanceClock(Duration by) {
        clock.advance(by);
    }

    /**
     * Makes the prefill engine compute each prefill for this long from now on, so that a test can act while one runs
     * however slow the machine is. Set on the engine's own event loop, which reads it for every prefill.
     */
    public void slowPrefill(Duration compute) {
        prefill.onContext(() -> {
            prefill.engineConfig().prefillLatencyMs = compute.toMillis();
            return null;
        });
    }

    /** Restarts any routed engine a test crashed, clears every fault and gives prefills their usual pace. */
    public void heal() {
        for (SimEngine e : routed()) {
            if (!e.isUp()) {
                e.restart();
            }
            e.faults().clear();
        }
        slowPrefill(Duration.ofMillis(EngineFleet.PREFILL_LATENCY_MS));
    }

    void stop() {
        routed().forEach(SimEngine::stopBlocking);
        aggregated.stopBlocking();
    }

    @Override
    public String toString() {
        return family;
    }
}
