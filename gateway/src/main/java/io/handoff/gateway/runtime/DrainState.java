package io.handoff.gateway.runtime;

import jakarta.inject.Singleton;

import java.time.Instant;
import java.util.Optional;

/**
 * Whether this replica takes new work, read on the hot path (Generate admission, AllocateKvSession) without any
 * I/O. The deployment's drain mark lives in the session store; {@code discovery.Drain} keeps this copy in step with
 * it, so a drain started on any replica reaches every replica within one poll period.
 */
@Singleton
public class DrainState {

    private volatile Instant since;

    /** Whether new Generates and allocations are refused. */
    public boolean draining() {
        return since != null;
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
