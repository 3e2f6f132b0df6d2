package io.handoff.gateway.runtime;

import jakarta.inject.Singleton;

import java.time.Instant;
import java.util.Optional;

/**
 * Whether this replica takes new work, read on the hot path (Generate admission, AllocateKvSession) without any
 * I/O. Two reasons refuse it: the deployment's drain, whose mark lives in the session store ({@code control.Drain}
 * keeps this copy in step with it, so a drain started on any replica reaches every replica within one poll period),
 * and this replica's own stop ({@code control.ReplicaStop}, on SIGTERM), which no store read undoes.
 */
@Singleton
public class DrainState {

    private volatile Instant since;
    private volatile boolean stopping;
    /** Tickets given out, to reads of the store's mark as they are sent and to this replica's own writes. */
    private long tickets;
    /** The ticket of what {@link #since} was last set from. */
    private long appliedTicket;

    /** Whether the deployment drains (the store's mark, as this replica last read it). */
    public boolean draining() {
        return since != null;
    }

    /** Whether this replica is stopping: it takes no new work until its process ends. */
    public boolean stopping() {
        return stopping;
    }

    /** From now on this replica refuses new work; there is no way back (its process is ending). */
    public void stop() {
        stopping = true;
    }

    /** Whether new Generates and allocations are refused here, for the deployment's drain or this replica's stop. */
    public boolean refusesNewWork() {
        return stopping || since != null;
    }

    /** Why new work is refused, for the client: the same code and status either way, only the words differ. */
    public String refusal(String what) {
        return stopping ? "this replica is stopping: it takes no " + what + "; send it to another replica"
                : "this deployment is draining: it takes no " + what + "; send it to another deployment, or retry"
                        + " once the drain is over";
    }

    /** Since when the deployment drains, as this replica last saw it. */
    public Optional<Instant> since() {
        return Optional.ofNullable(since);
    }

    /**
     * A read of the store's mark is about to be sent: its ticket, for {@link #readAnswered}. Reads answer out of
     * order (another event loop's poll, an answer that waited for its thread), so each answer carries when it was
     * asked.
     */
    public synchronized long readSent() {
        return ++tickets;
    }

    /**
     * What a read of the store said: draining since a moment, or (null) not draining. Ignored when something asked
     * or written after that read was sent has been applied already: a poll that read the mark before this replica
     * started (or stopped) the drain would otherwise undo what the replica had just written.
     *
     * @return whether it was applied
     */
    public synchronized boolean readAnswered(long ticket, Instant drainingSince) {
        if (ticket < appliedTicket) {
            return false;
        }
        appliedTicket = ticket;
        since = drainingSince;
        return true;
    }

    /**
     * What this replica wrote to the store, once the store acknowledged it: draining since a moment, or (null) not
     * draining. Newer than what every read sent before it says.
     */
    public synchronized void set(Instant drainingSince) {
        appliedTicket = ++tickets;
        since = drainingSince;
    }
}
