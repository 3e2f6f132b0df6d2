package io.handoff.connector.tck;

import java.time.Duration;

/** What the contract suite needs from one simulated engine: its KV accounting, faults and crashes. */
public interface SimulatedEngine {

    /** KV blocks the engine holds right now (running requests and parked prefills). */
    long pinnedBlocks();

    /** A counter from the simulator's stats (e.g. {@code requests_aborted}, {@code freed_by_timeout}). */
    long stat(String name);

    /** The engine finishes requests but holds each answer back this long (a client abort then hits a finished request). */
    void delayAnswers(Duration delay);

    /** The engine waits this long before it looks at each request. */
    void delayAdmission(Duration delay);

    /** Clears faults and counters and drops holds: a clean start for the next case. */
    void reset();

    /** Clears faults only; holds stay, so what a case left pinned is still visible. */
    void clearFaults();

    /** Crashes the process (connections reset, pinned KV lost) and restarts it after {@code restartAfter}. */
    void crash(Duration restartAfter);

    /** Whether it listens (false between a crash and its restart). */
    boolean isUp();
}
