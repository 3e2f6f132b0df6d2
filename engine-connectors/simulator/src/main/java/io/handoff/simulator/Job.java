package io.handoff.simulator;

import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One in-flight request inside an engine: its scheduler slot, its KV blocks, its timers and its abort hook. Families
 * keep their own state in {@link #state}. Event-loop confined.
 */
public final class Job {
    private final String id;
    private final RoutingContext rc;
    int[] blocks = new int[0];
    boolean admitted;
    boolean queued;
    boolean done;
    boolean aborted;
    private Leg leg = Leg.NONE;
    private boolean tokenSent;
    boolean cancelCounted;
    private final List<Long> timers = new ArrayList<>();
    private Runnable onAbort = () -> { };
    private Object state;

    public Job(String id, RoutingContext rc) {
        this.id = id;
        this.rc = rc;
    }

    public String id() {
        return id;
    }

    /** The client request this job answers, or null for an internal one. */
    public RoutingContext rc() {
        return rc;
    }

    public boolean isDone() {
        return done;
    }

    public boolean isAborted() {
        return aborted;
    }

    public boolean isAdmitted() {
        return admitted;
    }

    /** Marks the job finished from the engine's point of view: a later client abort is ignored. */
    public void markDone() {
        done = true;
    }

    /** Marks the job as one leg of a handoff, so that a cancel of it is counted by phase. */
    public void leg(Leg l) {
        this.leg = l;
    }

    public Leg leg() {
        return leg;
    }

    /** Notes that at least one output token reached the client: a cancel from now on is mid-stream. */
    public void tokenSent() {
        tokenSent = true;
    }

    public boolean hasSentToken() {
        return tokenSent;
    }

    /** What to undo when the job is aborted (release holds, notify peers). Runs once, on the event loop. */
    public void onAbort(Runnable r) {
        this.onAbort = r;
    }

    Runnable abortHook() {
        return onAbort;
    }

    /** Takes the first {@code n} of the job's blocks out of it (to pin them in a hold). */
    public int[] takeBlocks(int n) {
        int k = Math.min(n, blocks.length);
        int[] taken = Arrays.copyOf(blocks, k);
        blocks = Arrays.copyOfRange(blocks, k, blocks.length);
        return taken;
    }

    /** A timer that does nothing if the job is over by then, and is cancelled if the job is aborted. */
    public void timer(Vertx vertx, long delayMs, Runnable r) {
        if (delayMs <= 0) {
            if (!aborted) {
                r.run();
            }
            return;
        }
        long[] holder = new long[1];
        holder[0] = vertx.setTimer(delayMs, t -> {
            timers.remove(holder[0]);
            if (!aborted) {
                r.run();
            }
        });
        timers.add(holder[0]);
    }

    void cancelTimers(Vertx vertx) {
        for (long t : timers) {
            vertx.cancelTimer(t);
        }
        timers.clear();
    }

    @SuppressWarnings("unchecked")
    public <T> T state() {
        return (T) state;
    }

    public void state(Object s) {
        this.state = s;
    }
}
