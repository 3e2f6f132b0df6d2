package io.handoff.gateway.runtime;

import io.smallrye.config.ConfigMapping;

import java.util.Optional;

/**
 * {@code handoff.replica-id}. Part of the {@code handoff} root, whose keys are validated together: a key under
 * {@code handoff.} that no mapping declares stops the gateway at start instead of being ignored.
 */
@ConfigMapping(prefix = "handoff")
public interface ReplicaConfig {

    /** This replica's name among its peers; host name plus a random suffix when unset. */
    Optional<String> replicaId();
}
