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

    /** Sets what the store says: draining since a moment, or (null) not draining. */
    public void set(Instant drainingSince) {
        this.since = drainingSince;
    }
}
