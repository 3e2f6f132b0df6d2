package io.handoff.gateway.session;

import io.handoff.gateway.session.store.SessionStore.CleanupClaim;

import java.time.Duration;

/**
 * Where a replica hands the cleanup it has just claimed (by releasing or ending a session). Implemented by the
 * reaper, which owns discharging obligations; declared here so the session core does not depend on it.
 */
public interface CleanupHandoff {

    void dischargeClaimed(Session session, CleanupClaim claim);

    /** How long a claim is held before another replica may take the cleanup over. */
    Duration claimTtl();
}
