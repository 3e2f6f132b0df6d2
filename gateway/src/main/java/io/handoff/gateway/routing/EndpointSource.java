package io.handoff.gateway.routing;

import java.util.Locale;

/** Where a pool's endpoint came from: the route's configuration at start, an admin call, or Kubernetes discovery. */
public enum EndpointSource {
    STATIC, ADMIN, KUBERNETES;

    /** The name the admin API and metrics use. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
