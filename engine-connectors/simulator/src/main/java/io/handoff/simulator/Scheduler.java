package io.handoff.simulator;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * First-come-first-served admission: a request runs when fewer than {@code maxRunning} run and the KV pool has its
 * blocks; otherwise it waits (the {@code waiting} gauge). Pinned KV that is never freed therefore shows up as waiting
 * requests, as on a real engine. Event-loop confined.
 */
public final class Scheduler {
    private final KvBlockPool pool;
    private final int maxRunning;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private int running;
    private boolean draining;
    private boolean again;

    private static final class Pending {
        final Job job;
        final int blocks;
        final Consumer<Job> onAdmit;

        Pending(Job job, int blocks, Consumer<Job> onAdmit) {
            this.job = job;
            this.blocks = blocks;
            this.onAdmit = onAdmit;
        }
    }

    public Scheduler(KvBlockPool pool, int maxRunning) {
        this.pool = pool;
        this.maxRunning = maxRunning;
    }

    /** Queues the job; {@code onAdmit} runs (maybe at once) once it has a slot and its blocks in {@link Job#blocks}. */
    public void submit(Job job, int blocks, Consumer<Job> onAdmit) {
        job.queued = true;
        waiting.addLast(new Pending(job, blocks, onAdmit));
        drain();
    }

    /** Removes a job that is still waiting; returns whether it was. */
    public boolean cancel(Job job) {
        for (Iterator<Pending> it = waiting.iterator(); it.hasNext();) {
            if (it.next().job == job) {
                it.remove();
                job.queued = false;
                return true;
            }
        }
        return false;
    }

    /** A running job ended: its slot is free. */
    public void finished(Job job) {
        if (job.admitted) {
            job.admitted = false;
            running--;
        }
        drain();
    }

    /** Tries to admit waiting jobs (after blocks were freed). */
    public void drain() {
        if (draining) {
            again = true;
            return;
        }
        draining = true;
        try {
            do {
                again = false;
                List<Pending> admitted = new ArrayList<>();
                while (!waiting.isEmpty()) {
                    Pending p = waiting.peekFirst();
                    if (running >= maxRunning || !pool.canAllocate(p.blocks)) {
                        break;
                    }
                    waiting.pollFirst();
                    running++;
                    p.job.queued = false;
                    p.job.admitted = true;
                    p.job.blocks = pool.allocate(p.blocks);
                    admitted.add(p);
                }
                for (Pending p : admitted) {
                    p.onAdmit.accept(p.job);
                }
            } while (again);
        } finally {
            draining = false;
        }
    }

    /** Forgets everything (crash). */
    public void reset() {
        waiting.clear();
        running = 0;
    }

    public int running() {
        return running;
    }

    public int waiting() {
        return waiting.size();
    }
}
