package io.handoff.gateway.fleet;

import io.smallrye.config.ConfigMapping;

import java.util.Optional;

/**
 * {@code handoff.kubernetes.*}: how discovery reaches the Kubernetes API, documented in README ("Configuration").
 * Read only when some route asks for discovery.
 */
@ConfigMapping(prefix = "handoff.kubernetes")
public interface KubernetesConfig {

    /**
     * The API server; unset: found as kubectl finds it (the pod's service account inside a cluster, else the
     * kubeconfig).
     */
    Optional<String> apiServerUrl();
}
